"""`python -m tinygrad_attn ...`: the command line. Each command lives in the module it shows.

This file only parses arguments and dispatches; it holds no demo, drawing or checking logic.
"""

from __future__ import annotations

import argparse
import os
import sys


def _demo(args: argparse.Namespace) -> int:
    from .examples import run

    return run(args.out)


def _graph(args: argparse.Namespace) -> int:
    from .examples import render_examples

    for path in render_examples(args.out):
        print(f"wrote {path}")
    return 0


def _gradcheck(argv: list[str]) -> int:
    from .testing.cli import main

    return main(argv)


def _replay(args: argparse.Namespace) -> int:
    from .examples import replay_example

    path = replay_example(args.out, args.model)
    print(f"wrote {path}  (open it in a browser; -> / <- walk through the backward steps)")
    return 0


def _learn(args: argparse.Namespace) -> int:
    from .examples.learning import main

    return main(args.out, args.model)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m tinygrad_attn",
        description="tinygrad_attn: see and step through how attention learns.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = commands.add_parser(
        "demo",
        help="the reference article made runnable: attention tables, a training step drawn, "
        "gradients checked",
    )
    demo.add_argument("--out", default="out", help="folder for the pictures (default: out)")
    demo.set_defaults(run=_demo)
    graph = commands.add_parser(
        "graph",
        help="draw the README's pictures (the trained attention head, a two-block transformer "
        "collapsed and with its attention expanded, the head's gradient as the backward's ops)",
    )
    graph.add_argument("--out", default="out", help="folder for the pictures (default: out)")
    graph.set_defaults(run=_graph)
    # gradcheck parses its own arguments (OP ..., --seed, --list, --help): see testing/cli.py.
    commands.add_parser(
        "gradcheck",
        help="check every op's gradient against central differences (--help for its options)",
        add_help=False,
    )
    replay = commands.add_parser(
        "replay", help="write an HTML page that replays a backward pass step by step"
    )
    replay.add_argument(
        "--out", default="out", help="folder for backward_MODEL.html (default: out)"
    )
    replay.add_argument(
        "--model",
        choices=("head", "transformer"),
        default="head",
        help="the article's attention head (default), or a small model around a transformer "
        "block, its modules collapsed",
    )
    replay.set_defaults(run=_replay)
    learn = commands.add_parser(
        "learn", help="train a model and write an HTML page that replays its training, step by step"
    )
    learn.add_argument("--out", default="out", help="folder for learn_MODEL.html (default: out)")
    learn.add_argument(
        "--model",
        choices=("head", "classifier", "transformer"),
        default="head",
        help="the article's head (default), demo 2's classifier or demo 3's transformer",
    )
    learn.set_defaults(run=_learn)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    if argv[:1] == ["gradcheck"]:
        command, run = "gradcheck", lambda: _gradcheck(argv[1:])
    else:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return 2
        command, run = args.command, lambda: args.run(args)
    try:
        return int(run() or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader went away (`... | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as err:  # one line for the terminal; the traceback helps nobody here
        print(f"python -m tinygrad_attn {command}: {type(err).__name__}: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
