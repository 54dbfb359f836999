"""checks.py - The tool tests' assertion: check(cond, what[, output])
counts a failure and prints what failed (with the tool's output if given);
`failures` is the count, for the test's exit status."""


class Checks:
    def __init__(self):
        self.failures = 0

    def __call__(self, cond, what, out=""):
        if not cond:
            self.failures += 1
            print(f"FAILED: {what}" + (f"\n{out}" if out else ""))
