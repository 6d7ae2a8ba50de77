"""A local OpenAI-compatible server for tests and for trying the judge pipeline without a key.

>>> from seekbench.testing import OpenAIServer
>>> with OpenAIServer(faults="429:0.2") as srv:  # doctest: +SKIP
...     client = openai.OpenAI(base_url=srv.base_url, api_key="sk-test")

See :mod:`seekbench.testing._protocol` for the prompt contract
(:data:`STEPS_BEGIN`, :data:`STEPS_END`, :data:`TRACE_ID_PREFIX`) and
:mod:`seekbench.testing._faults` for the fault spec grammar.
"""

from ._batches import ApiError
from ._faults import (
    BAD_ENUM_VALUE,
    CONTENT_FAULTS,
    DEFAULT_INJECTED_NOTE,
    FAULT_HEADER,
    FAULT_KINDS,
    TRANSPORT_FAULTS,
    FaultSpec,
    apply_content_fault,
)
from ._profile import ServerProfile
from ._prompts import ShippedPrompts, default_policy
from ._protocol import (
    MOCK_FIELDS_BY_KIND,
    ONLY_STEPS_PREFIX,
    RULE_DERIVED_VALUES,
    STEPS_BEGIN,
    STEPS_END,
    TRACE_ID_PREFIX,
    Policy,
    PolicyError,
    StepLabeler,
    count_tokens,
    extract_steps,
    extract_trace_id,
    label_steps,
    only_steps,
    render_steps_block,
)
from ._server import OpenAIServer

__all__ = [
    "ApiError",
    "BAD_ENUM_VALUE",
    "CONTENT_FAULTS",
    "DEFAULT_INJECTED_NOTE",
    "FAULT_HEADER",
    "FAULT_KINDS",
    "FaultSpec",
    "MOCK_FIELDS_BY_KIND",
    "ONLY_STEPS_PREFIX",
    "OpenAIServer",
    "Policy",
    "PolicyError",
    "RULE_DERIVED_VALUES",
    "STEPS_BEGIN",
    "STEPS_END",
    "ServerProfile",
    "ShippedPrompts",
    "StepLabeler",
    "TRACE_ID_PREFIX",
    "TRANSPORT_FAULTS",
    "apply_content_fault",
    "count_tokens",
    "default_policy",
    "extract_steps",
    "extract_trace_id",
    "label_steps",
    "only_steps",
    "render_steps_block",
]
