"""Reads pwflagsd's flags over Varlink with the stock `varlink` package from PyPI (VarlinkPythonTests).

usage: varlink_client.py SOCKET all      every method, then Listen (two replies: the snapshot and one change)
       varlink_client.py SOCKET control  SetUserId, which ControlGroups may refuse, then Get

Prints one JSON object a line: {"step": NAME, "value": REPLY} or, for an error, {"step": NAME, "error": NAME,
"parameters": {...}}.
"""
import json
import sys

import varlink


def out(step, value=None, error=None):
    line = {"step": step}
    if error is None:
        line["value"] = value
    else:
        line["error"] = error.error()
        line["parameters"] = error.parameters()
    print(json.dumps(line, sort_keys=True), flush=True)


def call(step, method, **parameters):
    try:
        out(step, method(**parameters))
    except varlink.VarlinkError as error:
        out(step, error=error)


def main():
    socket, mode = sys.argv[1], sys.argv[2]
    with varlink.Client(address="unix:" + socket) as client:
        with client.open("org.varlink.service", namespaced=False) as service:
            call("info", service.GetInfo)
        with client.open("io.github.pwflagsd.Flags", namespaced=False) as flags:
            if mode == "control":
                call("setUserId", flags.SetUserId, userId="from-python")
                call("get", flags.Get, key="dark_mode")
                return
            call("get", flags.Get, key="dark_mode")
            call("getAll", flags.GetAll)
            call("refresh", flags.Refresh)
            call("logImpression", flags.LogImpression, key="dark_mode")
            call("setUserId", flags.SetUserId, userId="from-python")
            call("setAppState", flags.SetAppState, state="background")
            call("badState", flags.SetAppState, state="sideways")
            call("explain", flags.Explain, key="dark_mode")
            call("getStatus", flags.GetStatus)
        with client.open("io.github.pwflagsd.Flags", namespaced=False) as flags:
            for count, reply in enumerate(flags.Listen(keys=["dark_mode"], _more=True)):
                out("listen", reply)
                if count == 1:
                    break


main()
