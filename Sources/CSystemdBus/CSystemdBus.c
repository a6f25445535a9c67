#include "CSystemdBus.h"

#include <errno.h>
#include <stdatomic.h>

/* The daemon's two functions, set by the first pwflagsd_bus_add_object (always the same two). */
static _Atomic(pwflagsd_bus_method) daemon_method;
static _Atomic(pwflagsd_bus_property) daemon_property;

static int on_method(sd_bus_message *call, void *userdata, sd_bus_error *error) {
    pwflagsd_bus_method method = atomic_load(&daemon_method);
    return method ? method(call, userdata, error) : -ENOSYS;
}

static int on_property(sd_bus *bus, const char *path, const char *interface, const char *property,
                       sd_bus_message *reply, void *userdata, sd_bus_error *error) {
    (void)bus;
    (void)path;
    (void)interface;
    pwflagsd_bus_property read = atomic_load(&daemon_property);
    return read ? read(property, reply, userdata, error) : -ENOSYS;
}

/* A flag on the bus: key, enabled, ruleId, properties, the flag's exact JSON text. */
#define FLAG "(sbsa{sv}s)"

/* docs/dbus.md is the reference of this interface; systemd/dbus/ holds its introspection XML, which the tests
 * compare with what this table makes sd-bus answer. Every member may be called by anyone the bus policy lets through (SD_BUS_VTABLE_UNPRIVILEGED):
 * the daemon checks the caller's credentials itself. */
static const sd_bus_vtable flags_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_METHOD_WITH_NAMES("Get", "s", SD_BUS_PARAM(key), "bbsa{sv}s",
                             SD_BUS_PARAM(found) SD_BUS_PARAM(enabled) SD_BUS_PARAM(rule_id)
                                 SD_BUS_PARAM(properties) SD_BUS_PARAM(json),
                             on_method, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES("IsEnabled", "sb", SD_BUS_PARAM(key) SD_BUS_PARAM(default_value), "b",
                             SD_BUS_PARAM(enabled), on_method, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES("GetAll", "", , "sta" FLAG, SD_BUS_PARAM(epoch) SD_BUS_PARAM(revision)
                                 SD_BUS_PARAM(flags),
                             on_method, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES("Refresh", "", , "bbis", SD_BUS_PARAM(succeeded) SD_BUS_PARAM(from_network)
                                 SD_BUS_PARAM(status) SD_BUS_PARAM(reason),
                             on_method, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES("LogImpression", "s", SD_BUS_PARAM(key), "si",
                             SD_BUS_PARAM(outcome) SD_BUS_PARAM(status), on_method, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES("SetUserId", "s", SD_BUS_PARAM(user_id), "ss",
                             SD_BUS_PARAM(effective_user_id) SD_BUS_PARAM(held_until), on_method,
                             SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES("SetAppState", "s", SD_BUS_PARAM(state), "b", SD_BUS_PARAM(session_started), on_method,
                             SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES("Explain", "s", SD_BUS_PARAM(key), "s", SD_BUS_PARAM(json), on_method,
                             SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES("GetStatus", "", , "s", SD_BUS_PARAM(json), on_method, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_PROPERTY("Revision", "t", on_property, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("Epoch", "s", on_property, 0, SD_BUS_VTABLE_PROPERTY_CONST),
    SD_BUS_PROPERTY("Source", "s", on_property, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("ExpiresAt", "s", on_property, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("Status", "s", on_property, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_SIGNAL_WITH_NAMES("Changed", "ta" FLAG "as",
                             SD_BUS_PARAM(revision) SD_BUS_PARAM(changed) SD_BUS_PARAM(removed), 0),
    SD_BUS_VTABLE_END,
};

int pwflagsd_bus_add_object(sd_bus *bus, sd_bus_slot **slot, const char *path, const char *interface,
                            pwflagsd_bus_method method, pwflagsd_bus_property property, void *userdata) {
    atomic_store(&daemon_method, method);
    atomic_store(&daemon_property, property);
    return sd_bus_add_object_vtable(bus, slot, path, interface, flags_vtable, userdata);
}
