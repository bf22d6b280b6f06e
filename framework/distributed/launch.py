"""The deprecated launcher ``python -m framework.distributed.launch`` (PyTorch's
``torch.distributed.launch``): ``framework.distributed.run`` with ``--use-env``. Without
``--use-env`` each script gets ``--local-rank=<rank>`` as an argument; with it, only the
``LOCAL_RANK`` environment variable (as ``run`` always does)."""
import sys
import warnings

from .run import get_args_parser, parse_args as _parse_run_args, run

__all__ = ["parse_args", "launch", "main"]

_DEPRECATED = (
    "The module torch.distributed.launch is deprecated\n"
    "and will be removed in future. Use torchrun.\n"
    "Note that --use-env is set by default in torchrun.\n"
    "If your script expects `--local-rank` argument to be set, please\n"
    "change it to read from `os.environ['LOCAL_RANK']` instead. See \n"
    "https://pytorch.org/docs/stable/distributed.html#launch-utility for \n"
    "further instructions\n")


def parse_args(args):
    parser = get_args_parser()
    parser.prog = "python -m framework.distributed.launch"
    parser.add_argument(
        "--use-env", "--use_env", default=False, action="store_true",
        help="Use environment variable to pass 'local rank'. For legacy reasons, the "
             "default value is False. If set to True, the script will not pass "
             "--local-rank as argument, and will instead set LOCAL_RANK.")
    return _parse_run_args(args, parser)


def launch(args):
    if args.no_python and not args.use_env:
        raise ValueError("When using the '--no-python' flag, you must also set the "
                         "'--use-env' flag.")
    return run(args)


def main(args=None):
    warnings.warn(_DEPRECATED, FutureWarning, stacklevel=2)
    sys.exit(launch(parse_args(args)))


if __name__ == "__main__":
    main()
