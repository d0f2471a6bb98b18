"""llama.cpp's OpenAI-compatible server for one GGUF, on 127.0.0.1, until it is stopped.

Run by `LocalModelServer` (providers/local_model_supervisor.py) as a child process of
`manage.py serve`, never inside Loupe's own processes: the model's memory and threads, and a
crash inside llama.cpp, stay out of the web server and the worker. No Django here, so it
starts at once.
"""

from __future__ import annotations

import argparse
import errno
import os
import signal
import socket
import sys
import threading
from pathlib import Path

SLOTS = 2
CACHE_RAM_MIB = 512
# The exit status when another program listens on the port (the supervisor says so).
PORT_TAKEN = 3


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", required=True, help="the .gguf file")
    parser.add_argument("--alias", required=True, help="the model name the API answers to")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--context", type=int, default=8192)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--listening-file",
        type=Path,
        help="written (this process's pid) once it listens: the supervisor's proof that "
        "what answers on the port is this server, not another program",
    )
    arguments = parser.parse_args(argv)
    if port_taken(arguments.port):
        print(f"port {arguments.port} is taken by another program", flush=True)
        sys.exit(PORT_TAKEN)

    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = arguments.model
    params.model_alias = {arguments.alias}
    params.hostnames = ["127.0.0.1"]
    params.port = arguments.port
    # Two requests at once, each with the whole --context: a question asked while a studio
    # document is being written (minutes of a CPU) is answered beside it, not after it. A
    # CPU writes two sequences at almost the speed of one (each step reads the weights once
    # for both); the slots share the KV cache, which is sized for both.
    params.n_parallel = SLOTS
    params.n_ctx = arguments.context * SLOTS
    params.cpuparams.n_threads = arguments.threads
    params.cpuparams_batch.n_threads = arguments.threads
    # The system prompt and the passages an answer shares with the one before are not read
    # again (llama.cpp's prompt cache, per request: cache_prompt).
    params.cache_prompt = True
    # Prompts set aside from a slot are kept in memory up to this many MiB (llama.cpp's
    # default is 8 GiB, which a long run would fill): a couple of 8k-token prompts.
    params.cache_ram_mib = CACHE_RAM_MIB
    server = xllamacpp.Server(params)
    print(f"listening on {server.listening_address}", flush=True)
    if arguments.listening_file:
        temporary = arguments.listening_file.with_suffix(".new")
        temporary.write_text(str(os.getpid()))
        temporary.replace(arguments.listening_file)

    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    signal.signal(signal.SIGINT, lambda *_: stopped.set())
    stopped.wait()


def port_taken(port: int) -> bool:
    """Whether another program listens on 127.0.0.1:`port`: bound as llama.cpp binds it
    (SO_REUSEADDR), which a listener refuses."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as error:
            return error.errno == errno.EADDRINUSE
    return False


if __name__ == "__main__":
    main(sys.argv[1:])
