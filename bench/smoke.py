"""--smoke for the benchmarks (a helper module, not a script): a tiny run,
seconds long, that only shows the script still works against the tools as
they are (tests/test_bench_smoke.py runs every script so and requires exit
0); its figures mean nothing."""


def option(ap):
    ap.add_argument("--smoke", action="store_true",
                    help="a tiny run that only checks the script works (figures meaningless)")


def apply(args, **tiny):
    """With --smoke, args' attributes set to the tiny values given."""
    if args.smoke:
        for k, v in tiny.items():
            setattr(args, k, v)
    return args
