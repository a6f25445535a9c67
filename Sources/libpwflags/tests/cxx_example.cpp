// The header as C++ uses it, with no glue: RAII owners for the client and a flag, a capture-less lambda as the
// listener. cxx_example SOCKET prints what it read.
#include <pwflags.h>

#include <cstdio>
#include <memory>
#include <string>

namespace {
struct ClientFree {
    void operator()(pwflags_client *client) const { pwflags_client_free(client); }
};
struct FlagUnref {
    void operator()(pwflags_flag *flag) const { pwflags_flag_unref(flag); }
};
using Client = std::unique_ptr<pwflags_client, ClientFree>;
using Flag = std::unique_ptr<pwflags_flag, FlagUnref>;

Flag get(const Client &client, const char *key) {
    pwflags_flag *flag = nullptr;
    pwflags_client_get(client.get(), key, &flag);
    return Flag(flag);
}
}  // namespace

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    pwflags_client *raw = nullptr;
    if (pwflags_client_new(&raw, argv[1]) < 0) return 1;
    Client client(raw);
    if (pwflags_client_wait_for_snapshot(client.get(), 10 * 1000000) <= 0) return 1;
    int handle = pwflags_client_add_listener(
        client.get(), [](pwflags_client *, const char *const *, size_t, const char *const *, size_t, void *) {},
        nullptr);
    if (Flag checkout = get(client, "new_checkout")) {
        std::string color = pwflags_flag_get_string(checkout.get(), "button_color", "blue");
        std::printf("c++ new_checkout %s color=%s max_items=%g steps=%s\n",
                    pwflags_flag_is_enabled(checkout.get()) ? "enabled" : "disabled", color.c_str(),
                    pwflags_flag_get_number(checkout.get(), "max_items", 3),
                    pwflags_flag_get_json_array(checkout.get(), "steps"));
    }
    std::printf("c++ search_v2 %d removed=%d\n", pwflags_client_is_enabled(client.get(), "search_v2", 0),
                pwflags_client_remove_listener(client.get(), handle));
    return 0;
}
