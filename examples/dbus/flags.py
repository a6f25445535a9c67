#!/usr/bin/python3
"""Reads Pushwoosh feature flags from pwflagsd over D-Bus with python3-dbus, then prints each change.

    python3 flags.py [--address ADDRESS] [--changes N] [KEY]

KEY defaults to new_checkout (a flag of the demo set). Without --address it uses the system bus. It waits for the
daemon when it is not running. With --changes N it exits after N changes (0, the default: it only reads); a change
made while the daemon was stopped counts as one, printed when the daemon is back. Needs python3-dbus and
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
# The errors of a call that found no daemon: the next owner of the name is read instead.
NO_DAEMON = {"org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner",
             "org.freedesktop.DBus.Error.NoReply"}


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
    # follow_name_owner_changes: each call goes to the name's owner when it is made, a restarted daemon included.
    flags = dbus.Interface(bus.get_object(NAME, PATH, introspect=False, follow_name_owner_changes=True), INTERFACE)
    loop = GLib.MainLoop()
    held = {}  # every flag's JSON text by key, as the last GetAll and the Changed signals since say
    revision = [None]  # the revision `held` is at; None before the first GetAll
    left = [options.changes]
    status = [0]

    def show(at, flags_changed, removed):
        print(f"revision {int(at)}: changed {' '.join(str(flag[0]) for flag in flags_changed) or '-'}; "
              f"removed {' '.join(map(str, removed)) or '-'}")
        for key, is_enabled, rule, props, _ in flags_changed:
            for name in sorted(props):
                print(f"  {key}.{name} = {json.dumps(plain(props[name]))}")
        sys.stdout.flush()
        left[0] -= 1
        if left[0] == 0:
            loop.quit()

    def changed(at, flags_changed, removed):
        if revision[0] is None or at <= revision[0]:
            return  # the GetAll under way, or made already, holds it
        revision[0] = at
        held.update((str(flag[0]), str(flag[4])) for flag in flags_changed)
        for key in removed:
            held.pop(str(key), None)
        show(at, flags_changed, removed)

    def read():
        """The first time: prints KEY and search_v2. Then reads every flag, and prints what differs from `held`."""
        if revision[0] is None:
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
                loop.quit()
                return
        _, at, every = flags.GetAll()
        now = {str(flag[0]): str(flag[4]) for flag in every}
        flags_changed = [flag for flag in every if held.get(str(flag[0])) != now[str(flag[0])]]
        removed = sorted(key for key in held if key not in now)
        first = revision[0] is None
        held.clear()
        held.update(now)
        revision[0] = at
        if first:
            # Subscribed, then read: a change from now on is heard.
            print("listening")
            sys.stdout.flush()
        elif flags_changed or removed:
            show(at, flags_changed, removed)

    def owner_changed(owner):
        """The name's owner: "" while no daemon serves; a new one is a daemon (re)started, read again."""
        if not owner:
            if revision[0] is None:
                print(f"flags.py: waiting for {NAME}", file=sys.stderr)
            return
        try:
            read()
        except dbus.DBusException as error:
            if error.get_dbus_name() in NO_DAEMON:
                return  # gone again: the name's next owner is read
            print(f"flags.py: {error.get_dbus_name()}: {error.get_dbus_message()}", file=sys.stderr)
            status[0] = 1
            loop.quit()
        except Exception:
            status[0] = 1
            loop.quit()  # python-dbus prints the exception and would carry on: end instead
            raise

    # bus_name: only the daemon's signals. Any client may send a signal with the daemon's path and interface;
    # python-dbus asks the bus who owns NAME, follows the owner across restarts (NameOwnerChanged), and drops a
    # Changed whose sender is not that owner, sent to everyone or to this program alone.
    bus.add_signal_receiver(changed, signal_name="Changed", dbus_interface=INTERFACE, path=PATH, bus_name=NAME)
    try:
        bus.start_service_by_name(NAME)  # D-Bus activation, where the bus has it (the package's system bus)
    except dbus.DBusException:
        pass  # none on this bus: the owner watch below reads when the daemon takes its name
    # Called with the owner now, then at each change of owner: after a restart the flags are read again, so a
    # change made while the daemon was stopped is printed too.
    bus.watch_name_owner(NAME, owner_changed)
    loop.run()
    return status[0]


if __name__ == "__main__":
    sys.exit(main())
