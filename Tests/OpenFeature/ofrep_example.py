"""Reads Pushwoosh flags from pwflagsd through OpenFeature's stock OFREP provider.

OFREP_BASE_URL is the listener's address (default http://127.0.0.1:8016) and OFREP_TOKEN the token in
[OFREP] TokenFile=. With --watch KEY the program then waits (up to 20 s) for KEY's value to change and
prints the new value: the provider asks the daemon on every evaluation, so a change shows at once.
"""

import json
import os
import sys
import time

from openfeature import api
from openfeature.contrib.provider.ofrep import OFREPProvider
from openfeature.evaluation_context import EvaluationContext

base_url = os.environ.get("OFREP_BASE_URL", "http://127.0.0.1:8016")
token = os.environ.get("OFREP_TOKEN")
headers = (lambda: {"Authorization": f"Bearer {token}"}) if token else None
api.set_provider(OFREPProvider(base_url, headers_factory=headers))
client = api.get_client("checkout")


def show(kind, details):
    line = f"{kind:7} {details.flag_key} = {json.dumps(details.value)}"
    if details.error_code:
        line += f" (default; {details.error_code}: {details.error_message})"
    else:
        line += f" ({details.reason}, variant {details.variant})"
    print(line, flush=True)


# Without an evaluation context: the provider sends {}.
show("boolean", client.get_boolean_details("new_checkout", False))
show("string", client.get_string_details("new_checkout.button_color", "blue"))
# With one: the daemon answers for its device and current user whatever the targetingKey says.
user = EvaluationContext(targeting_key="user-42", attributes={"plan": "pro"})
show("integer", client.get_integer_details("new_checkout.max_items", 1, user))
show("float", client.get_float_details("new_checkout.discount", 0.0, user))
show("object", client.get_object_details("new_checkout.layout", {}, user))
show("boolean", client.get_boolean_details("banner", True, user))
show("boolean", client.get_boolean_details("no_such_flag", False))

if len(sys.argv) == 3 and sys.argv[1] == "--watch":
    key = sys.argv[2]
    before = client.get_string_value(key, "")
    print(f"waiting for {key} to change from {json.dumps(before)}", flush=True)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        details = client.get_string_details(key, "")
        if details.value != before:
            show("string", details)
            break
        time.sleep(0.1)
    else:
        sys.exit(f"{key} did not change")
