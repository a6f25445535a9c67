"""Validates what pwflagsd's OFREP listener sent against the protocol's own schemas (ofrep-schemas.json).

Reads a JSON file {"eventStreams": <the bulk answer's member>, "events": [<sseEvent objects>]} and checks
eventStreams against bulkEvaluationSuccess.properties.eventStreams (items: eventStream), each event against
sseEvent, and each event's data, parsed as JSON, against sseEventData (the contentSchema sseEvent names, which
JSON Schema only annotates). Prints "valid: N events" and exits 0, or prints every error and exits 1.
"""

import json
import pathlib
import sys

from jsonschema import Draft202012Validator

schemas = json.loads((pathlib.Path(__file__).parent / "ofrep-schemas.json").read_text())


def validator(pointer):
    root = dict(schemas)
    root["$ref"] = pointer
    root.pop("$comment", None)
    return Draft202012Validator(root)


def main():
    sent = json.loads(pathlib.Path(sys.argv[1]).read_text())
    errors = []
    streams = validator("#/components/schemas/bulkEvaluationSuccess/properties/eventStreams")
    errors += [f"eventStreams: {e.message}" for e in streams.iter_errors(sent["eventStreams"])]
    event_schema = validator("#/components/schemas/sseEvent")
    data_schema = validator("#/components/schemas/sseEventData")
    for index, event in enumerate(sent["events"]):
        errors += [f"event {index}: {e.message}" for e in event_schema.iter_errors(event)]
        try:
            data = json.loads(event["data"])
        except (KeyError, ValueError) as error:
            errors.append(f"event {index}: data is not JSON: {error}")
            continue
        errors += [f"event {index} data: {e.message}" for e in data_schema.iter_errors(data)]
        if data.get("type") != "refetchEvaluation":
            errors.append(f"event {index} data: type is {data.get('type')!r}")
    # A check that the validator rejects what it must, so that a schema that validates nothing fails here.
    if not list(streams.iter_errors([{"type": "sse", "url": "http://x/", "endpoint": {"requestUri": "/"}}])):
        errors.append("the eventStream schema accepted both url and endpoint")
    if not list(data_schema.iter_errors({"etag": "x"})):
        errors.append("the sseEventData schema accepted data without type")
    for error in errors:
        print(error)
    if errors:
        sys.exit(1)
    print(f"valid: {len(sent['events'])} events")


main()
