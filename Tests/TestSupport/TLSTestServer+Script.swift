extension TLSTestServer {
    /// The server itself, in Python's standard library (`ssl`, `socket`), run with the settings as one JSON
    /// argument. Every accepted connection, request, CONNECT and failed handshake is a line in the events file.
    static let script = #"""
        import json, socket, ssl, sys, threading, time

        settings = json.loads(sys.argv[1])
        lock = threading.Lock()

        def event(text):
            with lock:
                with open(settings["events"], "a") as f:
                    f.write(text + "\n")

        context = None
        if settings.get("cert"):
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(settings["cert"], settings["key"])

        def read_head(conn, buf):
            while b"\r\n\r\n" not in buf:
                chunk = conn.recv(65536)
                if not chunk:
                    return None, buf
                buf += chunk
            head, rest = buf.split(b"\r\n\r\n", 1)
            return head.decode("latin-1"), rest

        def relay(source, sink):
            try:
                while True:
                    chunk = source.recv(65536)
                    if not chunk:
                        break
                    sink.sendall(chunk)
            except OSError:
                pass
            for s in (source, sink):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

        def tunnel(conn, target):
            host, _, port = target.rpartition(":")
            upstream = socket.create_connection((host.strip("[]"), int(port)))
            conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            threading.Thread(target=relay, args=(upstream, conn), daemon=True).start()
            relay(conn, upstream)

        def reply(conn):
            status = settings.get("status", 200)
            body = settings.get("body", "").encode()
            huge = settings.get("huge", 0)
            lines = ["HTTP/1.1 %d Scripted" % status, "Content-Length: %d" % (huge or len(body))]
            lines += ["%s: %s" % (name, value) for name, value in settings.get("headers", [])]
            conn.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
            if huge:
                chunk = b"x" * 65536
                sent = 0
                while sent < huge:
                    conn.sendall(chunk[: huge - sent])
                    sent += min(len(chunk), huge - sent)
            else:
                conn.sendall(body)

        def serve(conn):
            event("CONNECTION")
            try:
                if context is not None:
                    try:
                        conn = context.wrap_socket(conn, server_side=True)
                    except (ssl.SSLError, OSError) as error:
                        event("HANDSHAKE-FAILED")
                        return
                buf = b""
                while True:
                    head, buf = read_head(conn, buf)
                    if head is None:
                        return
                    lines = head.split("\r\n")
                    method, target, _ = lines[0].split(" ", 2)
                    length = 0
                    for line in lines[1:]:
                        name, _, value = line.partition(":")
                        if name.strip().lower() == "content-length":
                            length = int(value.strip())
                    if method == "CONNECT":
                        event("CONNECT " + target)
                        tunnel(conn, target)
                        return
                    while len(buf) < length:
                        chunk = conn.recv(65536)
                        if not chunk:
                            return
                        buf += chunk
                    buf = buf[length:]
                    host = [l.partition(":")[2].strip() for l in lines[1:] if l.lower().startswith("host:")]
                    cookie = any(l.lower().startswith("cookie:") for l in lines[1:])
                    event("REQUEST %s %s %s cookie=%s" % (method, target, host[0] if host else "-", "yes" if cookie else "no"))
                    if settings.get("hang"):
                        time.sleep(3600)
                    reply(conn)
            except OSError:
                pass
            finally:
                try:
                    conn.close()
                except OSError:
                    pass

        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        with open(settings["portFile"] + ".tmp", "w") as f:
            f.write(str(listener.getsockname()[1]))
        import os
        os.rename(settings["portFile"] + ".tmp", settings["portFile"])
        while True:
            conn, _ = listener.accept()
            threading.Thread(target=serve, args=(conn,), daemon=True).start()
        """#
}
