#!/usr/bin/python3
"""Reads Pushwoosh feature flags from pwflagsd over D-Bus with python3-dbus, then prints each change.

    python3 flags.py [--address ADDRESS] [--changes N] [KEY]

KEY defaults to new_checkout (a flag of the demo set). Without --address it uses the system bus. With
--changes N it exits after N Changed signals (0, the default: it only reads). Needs python3-dbus and
python3-gi (Debian's packages).
"""
import argparse
import json
import sys

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

NAME = "io.github.pwflagsd.Flags1"
PATH = "/io/github/pwflagsd/Flags1"
INTERFACE = "io.github.pwflagsd.Flags1"


def plain(value):
    """A D-Bus value as plain Python: the a{sv} of properties as a dict, variants unwrapped."""
    if isinstance(value, dbus.Boolean):
        return bool(value)
    if isinstance(value, (dbus.Double, float)):
        return float(value)
    if isinstance(value, dbus.Dictionary):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, dbus.Array):
        return [plain(item) for item in value]
    if isinstance(value, str):
        return str(value)
    return value


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--address")
    parser.add_argument("--changes", type=int, default=0)
    parser.add_argument("key", nargs="?", default="new_checkout")
    options = parser.parse_args()

    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.bus.BusConnection(options.address) if options.address else dbus.SystemBus()
    flags = dbus.Interface(bus.get_object(NAME, PATH), INTERFACE)

    found, enabled, rule_id, properties, _ = flags.Get(options.key)
    if not found:
        print(f"{options.key}: not found")
    else:
        print(f"{options.key}: {'enabled' if enabled else 'disabled'} (rule {rule_id})")
        for name in sorted(properties):
            print(f"  {name} = {json.dumps(plain(properties[name]))}")
    print(f"search_v2 enabled: {bool(flags.IsEnabled('search_v2', False))}")
    sys.stdout.flush()
    if options.changes <= 0:
        return

    loop = GLib.MainLoop()
    left = [options.changes]

    def changed(revision, flags_changed, removed):
        keys = [str(flag[0]) for flag in flags_changed]
        print(f"revision {int(revision)}: changed {' '.join(keys) or '-'}; removed {' '.join(map(str, removed)) or '-'}")
        for key, is_enabled, rule, props, _ in flags_changed:
            for name in sorted(props):
                print(f"  {key}.{name} = {json.dumps(plain(props[name]))}")
        sys.stdout.flush()
        left[0] -= 1
        if left[0] == 0:
            loop.quit()

    # bus_name: only the daemon's signals. Any client may send a signal with the daemon's path and interface;
    # python-dbus asks the bus who owns NAME, follows the owner across restarts (NameOwnerChanged), and drops a
    # Changed whose sender is not that owner, sent to everyone or to this program alone.
    bus.add_signal_receiver(changed, signal_name="Changed", dbus_interface=INTERFACE, path=PATH, bus_name=NAME)
    # Subscribed: a change from now on is heard (a program that must not miss one reads GetAll after this).
    print("listening")
    sys.stdout.flush()
    loop.run()


if __name__ == "__main__":
    main()
