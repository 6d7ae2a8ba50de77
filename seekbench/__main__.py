from seekbench.cli import main

raise SystemExit(main())
