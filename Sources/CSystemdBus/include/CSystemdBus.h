#ifndef PWFLAGSD_CSYSTEMDBUS_H
#define PWFLAGSD_CSYSTEMDBUS_H

#include <systemd/sd-bus.h>

/* The daemon's D-Bus object, as sd-bus wants it: a vtable. sd-bus builds its tables with C macros (designated
 * initializers of a union with bit fields) that Swift cannot expand, so this file writes the table of the
 * interface in C and sends every call and property read to the two functions the daemon hands over once.
 * Nothing else lives here: the daemon's bus code (FlagsDaemon/Bus) does the rest through sd-bus's
 * non-variadic calls. */

/* Every method call of the interface; the member name says which (sd_bus_message_get_member). */
typedef int (*pwflagsd_bus_method)(sd_bus_message *call, void *userdata, sd_bus_error *error);
/* Every property read of the interface; `property` says which. */
typedef int (*pwflagsd_bus_property)(const char *property, sd_bus_message *reply, void *userdata,
                                      sd_bus_error *error);

/* Serves the interface `interface` at `path` on `bus`, calling `method` and `property` with `userdata`.
 * Returns what sd_bus_add_object_vtable returns (a negative errno on failure). */
int pwflagsd_bus_add_object(sd_bus *bus, sd_bus_slot **slot, const char *path, const char *interface,
                            pwflagsd_bus_method method, pwflagsd_bus_property property, void *userdata);

#endif
