"""Shared by the reference generators: print a generated block, or splice it into a test
file between its `// BEGIN GENERATED` and `// END GENERATED` lines (--write TEST_CPP)."""
import argparse
import re
import sys


def main(doc, block):
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write", metavar="TEST_CPP", help="replace the generated block in this file")
    args = ap.parse_args()
    text = block()
    if not args.write:
        sys.stdout.write(text)
        return
    with open(args.write) as f:
        src = f.read()
    pat = re.compile(r"// BEGIN GENERATED.*?// END GENERATED\n", re.S)
    if not pat.search(src):
        sys.exit(f"{args.write}: no BEGIN GENERATED / END GENERATED block")
    with open(args.write, "w") as f:
        f.write(pat.sub(lambda _: text, src, count=1))
