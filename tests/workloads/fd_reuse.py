"""One descriptor number waited on as a pipe, then as a socket, for
pyoffcpu's descriptor kinds (forgotten at close, dup2 and dup3).

    python fd_reuse.py DIR

Writes DIR/state.json ({"ready": true, "pid"}), waits for DIR/go, then,
for ROUNDS rounds, in the main thread:

  read_from_pipe     os.read on fd N, a pipe another thread writes to
  read_from_socket   os.read on the same N after os.dup2 of a socket onto
                     it (another thread sends)
  read_after_close   os.read on the same N again, a pipe, after os.close
                     of N and os.pipe handing N out again

then exits. Each wait is PAUSE seconds. The truth is in the names: DIR/
truth.json says which fd number it was, and that it stayed the same.
"""
import json
import os
import socket
import sys
import threading
import time

DIR = sys.argv[1]
ROUNDS = 3
PAUSE = 0.5  # long enough for pyoffcpu to learn the kind meanwhile


def publish(name, data):
    """DIR/name, whole or not at all (renamed into place)."""
    final = os.path.join(DIR, name)
    with open(final + ".part", "w") as fp:
        fp.write(json.dumps(data))
    os.replace(final + ".part", final)


def read_from_pipe(fd, w):
    threading.Timer(PAUSE, os.write, (w, b"x")).start()
    return os.read(fd, 1)


def read_from_socket(fd, peer):
    threading.Timer(PAUSE, peer.send, (b"x",)).start()
    return os.read(fd, 1)


def read_after_close(fd, w):
    threading.Timer(PAUSE, os.write, (w, b"x")).start()
    return os.read(fd, 1)


def main():
    publish("state.json", {"ready": True, "pid": os.getpid()})
    while not os.path.exists(os.path.join(DIR, "go")):
        time.sleep(0.01)
    fds = []
    for _ in range(ROUNDS):
        r, w = os.pipe()
        read_from_pipe(r, w)
        a, b = socket.socketpair()
        os.dup2(a.fileno(), r)  # r is now the socket a
        read_from_socket(r, b)
        os.close(r)
        os.close(w)
        a.close()
        b.close()
        r2, w2 = os.pipe()  # the lowest free numbers: r again
        if r2 != r:
            os.dup2(r2, r)
            os.close(r2)
        read_after_close(r, w2)
        os.close(r)
        os.close(w2)
        fds.append(r)
    publish("truth.json", {"fds": fds})


main()
