"""The ``oraclegap`` command: ``oraclegap coverage|nulls|certify|... POOL [options]``.

Each subcommand lives in ``oraclegap.commands.<name>`` with ``register(subparsers)``; the
ones present are discovered here, so later modules add commands without touching this file.
Output is a table by default and JSON with ``--json``.

Errors, for every verb alike: one line on stderr (``oraclegap VERB: error: ...``) and exit
status 2, never a traceback (``--debug``, before or after the verb, shows it). That covers
bad options (argparse's usage block is reduced to its error line), an option given twice,
and any exception a verb raises. Ctrl-C prints ``interrupted`` and exits 130 from the first
instruction of the command on (while it imports its modules too); a closed output pipe
(``oraclegap ... | head``) ends quietly with status 141, like other Unix tools.
"""

from __future__ import annotations

import sys


def _launched_as_command() -> bool:
    """Whether this process is the ``oraclegap`` command (the console script or ``python -m oraclegap.cli``)."""
    if __name__ == "__main__":
        return True
    argv0 = (getattr(sys, "argv", None) or [""])[0]
    return argv0.replace("\\", "/").rsplit("/", 1)[-1].removesuffix(".exe") == "oraclegap"


def _exit_interrupted(prog: str) -> int:
    """Report Ctrl-C in one line and return 130. In the command itself (never in a process that
    imported this module) the process ends here with status 130: CPython would otherwise end with
    SIGINT when the interrupt hit code that a C extension ran while importing, though it was handled."""
    print(f"{prog}: interrupted", file=sys.stderr)
    if _launched_as_command():
        import os
        import signal

        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C adds nothing
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(130)
    return 130


try:  # the package itself imports nothing heavy; these are the command's own imports
    import argparse
    import importlib
    import os
    import pkgutil
    import shlex
    import signal
    import subprocess
    import time
    import traceback
    from pathlib import Path

    from . import commands as _commands
except KeyboardInterrupt:  # Ctrl-C while the command starts: the same words and status as later
    if not _launched_as_command():
        raise
    _exit_interrupted("oraclegap")

__all__ = ["main", "build_parser", "OneLineParser", "error_line", "run_in_process", "command_line"]


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line on stderr (exit 2), and which refuses an
    option that takes a value when it is given more than once (argparse would keep the last)."""

    def error(self, message):  # noqa: D401 - argparse API
        self.exit(2, error_line(f"{self.prog}: error: {message}") + "\n")

    def parse_known_args(self, args=None, namespace=None):
        if args is not None:
            self._refuse_repeats(list(args))
        return super().parse_known_args(args, namespace)

    def _refuse_repeats(self, args: list) -> None:
        seen: dict[str, str] = {}
        for i, tok in enumerate(args):
            if tok == "--" or tok in getattr(self, "_subparser_names", ()):
                break
            if not isinstance(tok, str) or not tok.startswith("-") or tok == "-":
                continue
            opt, _, val = tok.partition("=")
            action = self._option_string_actions.get(opt)
            if action is None or action.nargs == 0 or isinstance(action, argparse._AppendAction):
                continue
            if not val and i + 1 < len(args):
                val = str(args[i + 1])
            key = action.dest
            if key in seen:
                self.error(f"argument {'/'.join(action.option_strings)}: given more than once ({seen[key]!r} and "
                           f"{val!r}); give it once")
            seen[key] = val
        return None


def error_line(text: str) -> str:
    """``text`` on a single line (newlines and runs of spaces collapsed)."""
    return " ".join(str(text).split())


def run_in_process(*args, threads: int = 1) -> tuple[str, float]:
    """Run ``oraclegap ARGS`` in a fresh Python process, as a shell would, and return its
    standard output and the wall-clock seconds it took (start-up included).

    The child sees this checkout's library first on ``PYTHONPATH`` and ``OMP_NUM_THREADS`` set to
    ``threads`` (one by default: on a shared CPU that avoids oversubscription). A non-zero exit
    status raises ``RuntimeError`` naming the verb, the status and the last line of stderr."""
    if not args:
        raise ValueError("args: no arguments given; expected a verb and its options, e.g. 'coverage', POOL")
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads: got {threads!r}; expected a positive integer")
    path = [str(Path(__file__).parents[1])] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "PYTHONPATH": os.pathsep.join(path)}
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "oraclegap.cli", *map(str, args)], capture_output=True, text=True, env=env)
    if res.returncode != 0:
        raise RuntimeError(f"oraclegap {args[0]} failed ({res.returncode}): {res.stderr.strip().splitlines()[-1:]}")
    return res.stdout, time.perf_counter() - t0


def command_line(*args, scratch=None, scratch_name: str = "$WORK") -> str:
    """The command ``oraclegap ARGS`` as a user would type it in a shell: ``Path`` arguments
    relative to the current directory, every occurrence of the folder ``scratch`` (when given)
    written as ``scratch_name`` (left unquoted, so the shell expands it), and everything else
    quoted for the shell (``shlex.quote``)."""
    root = None if scratch is None else str(scratch)
    words = []
    for a in args:
        if root is not None and root in str(a):
            # the rest of the word quoted, the variable left bare so the shell expands it
            words.append(scratch_name.join(shlex.quote(part) if part else "" for part in str(a).split(root)))
        else:
            words.append(shlex.quote(os.path.relpath(a) if isinstance(a, Path) else str(a)))
    return "oraclegap " + " ".join(words)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="oraclegap",
        description="Oracle-gap diagnostics for pools of policies (coverage, nulls, certificates, ...).",
    )
    parser.add_argument("--debug", action="store_true", help="show the full traceback of an error")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)
    sub.required = True
    for info in sorted(pkgutil.iter_modules(_commands.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{_commands.__name__}.{info.name}")
        mod.register(sub)
    names = set(sub.choices)
    parser._subparser_names = names  # the repeat check stops at the verb; each verb checks its own options
    for p in sub.choices.values():
        if "--debug" not in p._option_string_actions:
            p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                           help="show the full traceback of an error")
    return parser


def _message(exc: BaseException, args=None) -> str:
    if isinstance(exc, KeyError) and exc.args:
        return str(exc.args[0])
    if isinstance(exc, MemoryError):
        # name --max-memory only on the verbs that have it
        bound = " or lower the bound --max-memory allows" if hasattr(args, "max_memory") else ""
        return f"out of memory; ask for less (fewer draws or resamples, a smaller pool){bound}"
    if isinstance(exc, (ValueError, TypeError, OSError, LookupError, ArithmeticError)):
        text = str(exc)
        if isinstance(exc, OSError) and exc.strerror and exc.filename:
            text = f"{exc.strerror}: {exc.filename}"
        return text or type(exc).__name__
    return f"unexpected {type(exc).__name__}: {exc} (rerun with --debug for the traceback)"


_SIGINT_SEEN = False


def _on_sigint(signum, frame):
    """Python's own Ctrl-C behaviour (raise KeyboardInterrupt), remembering that it happened: a C
    extension interrupted while it loads may report an ImportError that carries no trace of it."""
    global _SIGINT_SEEN
    _SIGINT_SEEN = True
    raise KeyboardInterrupt


def _redeliver_interrupt(unraisable) -> None:
    """An interrupt that landed in a callback Python cannot raise from (a weak-reference callback of
    the import machinery) is sent again, to land where it can, instead of printing a traceback;
    anything else goes to Python's own hook."""
    if issubclass(unraisable.exc_type, KeyboardInterrupt):
        import threading  # sent from another thread a moment later: raised here, it would be unraisable too

        later = threading.Timer(0.005, os.kill, (os.getpid(), signal.SIGINT))
        later.daemon = True
        later.start()
        return
    sys.__unraisablehook__(unraisable)


def _by_interrupt(exc: BaseException) -> bool:
    """Whether ``exc`` stems from Ctrl-C: a SIGINT arrived while the CLI ran (numpy interrupted while
    it loads reports "PyCapsule_Import could not import module" without chaining the interrupt),
    or the KeyboardInterrupt is the exception's cause or context."""
    if _SIGINT_SEEN:
        return True
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def _quiet_stdout() -> None:
    """After a broken pipe: point stdout at /dev/null so that the interpreter's final flush is silent."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def main(argv=None) -> int:
    """Run the CLI; return the exit status (0 success, 2 error, 130 interrupted, 141 broken pipe)."""
    prog = "oraclegap"
    try:
        if _launched_as_command():  # the command's own process: a library caller keeps its handler
            signal.signal(signal.SIGINT, _on_sigint)
            sys.unraisablehook = _redeliver_interrupt
        argv = list(sys.argv[1:] if argv is None else argv)
        try:
            parser = build_parser()  # imports every verb's modules: Ctrl-C here is an interrupt like any other
        except Exception as exc:
            if _by_interrupt(exc):
                raise KeyboardInterrupt from None
            print(error_line(f"{prog}: error: cannot load the commands ({type(exc).__name__}: {exc}); reinstall "
                             "oraclegap"), file=sys.stderr)
            return 2
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:
            code = exc.code
            return code if isinstance(code, int) else (0 if code is None else 2)
        verb = getattr(args, "command", None) or "?"
        prog = f"oraclegap {verb}"
        debug = bool(getattr(args, "debug", False))
        try:
            rc = int(args.func(args) or 0)
            sys.stdout.flush()
            return rc
        except (BrokenPipeError, KeyboardInterrupt):
            raise
        except Exception as exc:  # every error of a verb becomes one line (the traceback only with --debug)
            if _by_interrupt(exc):
                raise KeyboardInterrupt from None
            if debug:
                traceback.print_exc()
            print(error_line(f"{prog}: error: {_message(exc, args)}"), file=sys.stderr)
            return 2
    except KeyboardInterrupt:
        return _exit_interrupted(prog)
    except BrokenPipeError:
        _quiet_stdout()
        return 141


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
