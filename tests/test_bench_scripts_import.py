"""Every benchmark script under scripts/bench imports: a refactor of a private module it reads must not break it.

judge_plan_sim.py imported ``seekbench.agreement._planning._plan_row`` after the function had
moved to ``_plan_rows.plan_row``, and nothing noticed until the benchmark was rerun. Importing a
script runs no benchmark (each runs from ``if __name__ == "__main__"``).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "scripts" / "bench"

_IMPORT_ALL = """
import importlib.util, sys, traceback
from pathlib import Path
failed = []
for path in sorted(Path('.').glob('*.py')):
    name = 'bench_' + path.stem
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is built
    try:
        spec.loader.exec_module(module)
    except BaseException:
        failed.append(path.name + ': ' + traceback.format_exc().strip().splitlines()[-1])
print('\\n'.join(failed) or 'all imported')
"""


def test_every_bench_script_imports():
    scripts = sorted(p.name for p in BENCH.glob("*.py"))
    assert "judge_plan_sim.py" in scripts and len(scripts) > 10
    # In a child process, from the scripts' directory (their sibling imports), the repository first on the path.
    env_path = [str(BENCH), str(BENCH.parent.parent)]
    code = f"import sys; sys.path[:0] = {env_path!r}\n" + _IMPORT_ALL
    done = subprocess.run([sys.executable, "-c", code], cwd=BENCH, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "all imported"
