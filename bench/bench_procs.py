"""A benchmark's process, its output in a log file: shared by bench/memif_bench.py and
bench/dpdk_bridge_bench.py (imported, so they set sys.dont_write_bytecode first: no __pycache__ in
the source tree)."""
import os
import shutil
import signal
import subprocess


class LoggedProcess:
    """A process started with its stdout and stderr in WORKDIR/NAME.log; prefix: its DPDK
    --file-prefix, whose run directories stop() removes."""

    def __init__(self, name, command, workdir, env=None, prefix=None):
        self.name, self.prefix = name, prefix
        self.log_path = os.path.join(workdir, f"{name}.log")
        self.log = open(self.log_path, "w+")
        self.command = command
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=self.log,
                                        stderr=subprocess.STDOUT, env=env)

    @property
    def pid(self):
        return self.process.pid

    def alive(self):
        return self.process.poll() is None

    def log_text(self):
        with open(self.log_path, errors="replace") as log:
            return log.read()

    def signal(self, sig):
        if self.alive():
            self.process.send_signal(sig)

    def stop(self):
        self.signal(signal.SIGCONT)
        self.signal(signal.SIGINT)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()
        if self.prefix:
            for base in ("/var/run/dpdk", os.path.join(os.environ.get("XDG_RUNTIME_DIR", "/tmp"), "dpdk")):
                shutil.rmtree(os.path.join(base, self.prefix), ignore_errors=True)
