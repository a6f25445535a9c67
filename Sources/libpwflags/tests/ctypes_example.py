"""libpwflags from Python through ctypes, with no compiled glue: ctypes_example.py LIBRARY SOCKET.

Reads a flag and its typed properties, adds a listener, asks for a refresh and waits for its completion
by running the client's own loop (pwflags_client_wait + pwflags_client_process)."""
import ctypes
import sys

lib = ctypes.CDLL(sys.argv[1])
socket_path = sys.argv[2].encode()

lib.pwflags_client_new.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p]
lib.pwflags_client_free.argtypes = [ctypes.c_void_p]
lib.pwflags_client_free.restype = ctypes.c_void_p
lib.pwflags_client_wait_for_snapshot.argtypes = [ctypes.c_void_p, ctypes.c_uint64]
lib.pwflags_client_wait.argtypes = [ctypes.c_void_p, ctypes.c_uint64]
lib.pwflags_client_process.argtypes = [ctypes.c_void_p]
lib.pwflags_client_get.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
lib.pwflags_client_is_enabled.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
lib.pwflags_flag_unref.argtypes = [ctypes.c_void_p]
lib.pwflags_flag_unref.restype = ctypes.c_void_p
lib.pwflags_flag_is_enabled.argtypes = [ctypes.c_void_p]
lib.pwflags_flag_get_rule_id.argtypes = [ctypes.c_void_p]
lib.pwflags_flag_get_rule_id.restype = ctypes.c_char_p
lib.pwflags_flag_get_string.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]
lib.pwflags_flag_get_string.restype = ctypes.c_char_p
lib.pwflags_flag_get_number.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_double]
lib.pwflags_flag_get_number.restype = ctypes.c_double
lib.pwflags_flag_get_bool.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
lib.pwflags_flag_get_json_object.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
lib.pwflags_flag_get_json_object.restype = ctypes.c_char_p

UPDATE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t,
                          ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t, ctypes.c_void_p)
REFRESH = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p)
lib.pwflags_client_add_listener.argtypes = [ctypes.c_void_p, UPDATE, ctypes.c_void_p]
lib.pwflags_client_refresh.argtypes = [ctypes.c_void_p, REFRESH, ctypes.c_void_p]

client = ctypes.c_void_p()
assert lib.pwflags_client_new(ctypes.byref(client), socket_path) == 0
assert lib.pwflags_client_wait_for_snapshot(client, 10_000_000) == 1

flag = ctypes.c_void_p()
assert lib.pwflags_client_get(client, b"new_checkout", ctypes.byref(flag)) == 1
print("python new_checkout", "enabled" if lib.pwflags_flag_is_enabled(flag) else "disabled",
      "rule=" + lib.pwflags_flag_get_rule_id(flag).decode(),
      "color=" + lib.pwflags_flag_get_string(flag, b"button_color", b"blue").decode(),
      "max_items=%g" % lib.pwflags_flag_get_number(flag, b"max_items", 3.0),
      "express=%d" % lib.pwflags_flag_get_bool(flag, b"express", 0),
      "layout=" + lib.pwflags_flag_get_json_object(flag, b"layout").decode())
lib.pwflags_flag_unref(flag)
print("python search_v2", lib.pwflags_client_is_enabled(client, b"search_v2", 0),
      "missing", lib.pwflags_client_is_enabled(client, b"no_such_flag", 1))

updates = []
on_update = UPDATE(lambda c, changed, n, removed, m, data: updates.append([changed[i].decode() for i in range(n)]))
assert lib.pwflags_client_add_listener(client, on_update, None) > 0
finished = []
on_refresh = REFRESH(lambda c, error, status, data: finished.append((error, status)))
assert lib.pwflags_client_refresh(client, on_refresh, None) == 0
while not finished:
    if lib.pwflags_client_wait(client, 10_000_000) <= 0:
        sys.exit("no refresh completion within 10 s")
    lib.pwflags_client_process(client)
print("python refresh error=%d status=%d" % finished[0])
lib.pwflags_client_free(client)
