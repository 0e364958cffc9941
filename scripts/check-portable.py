#!/usr/bin/env python3
"""Lists Linux-only API in the client's module closure outside Linux-guarded
code, and fails (exit 1) on any.

The closure is read from Package.swift (`swift package dump-package`): the
targets ChecklistClient depends on, directly or not, with ChecklistClient
itself; a dependency declared for Linux only (`.when(platforms: [.linux])`)
is not followed, since Apple builds never see it. Every Swift, C and header
file of those targets is scanned. A use is allowed only inside the branch of
an `#if os(Linux)` / `#if canImport(Glibc)` (Swift) or `#ifdef __linux__`
(C), or the `#else` of the negated forms.

Usage:
  scripts/check-portable.py                 check this package
  scripts/check-portable.py --self-test     check the checker on its fixtures
  scripts/check-portable.py --package-json F --root D [--roots A,B]
"""
import json
import os
import re
import subprocess
import sys

ROOTS = ["ChecklistClient"]

# What Apple platforms lack (or spell differently), as regular expressions
# over code with comments removed, and the name each finding is reported by.
LINUX_ONLY = [
    (r"\bepoll_\w+|\bEPOLL\w*|\bepoll_event\b", "epoll"),
    (r"\beventfd\b|\bEFD_\w+", "eventfd"),
    (r"\bsignalfd\b|\bSFD_\w+", "signalfd"),
    (r"\baccept4\b", "accept4"),
    (r"\bpipe2\b", "pipe2"),
    (r"\bSOCK_NONBLOCK\b", "SOCK_NONBLOCK"),
    (r"\bSOCK_CLOEXEC\b", "SOCK_CLOEXEC"),
    (r"\bMSG_NOSIGNAL\b", "MSG_NOSIGNAL"),
    (r"^\s*(@_exported\s+)?import\s+CLinux\b", "import CLinux"),
    (r"^\s*(@_exported\s+)?import\s+Glibc\b", "import Glibc"),
    (r"\bGlibc\.", "Glibc."),
    (r"\b__rlimit_resource_t\b", "__rlimit_resource_t"),
    (r"\bpthread_condattr_setclock\b", "pthread_condattr_setclock"),
    (r"\bpthread_setname_np\s*\(\s*[^,()]*(\([^()]*\))?[^,()]*,", "two-argument pthread_setname_np"),
    (r"\bmalloc_trim\b|\bmallopt\b|\bM_TRIM_THRESHOLD\b|\bM_MMAP_THRESHOLD\b", "glibc malloc tuning"),
    (r"\bsched_getaffinity\b|\bCPU_SET\b|\bprctl\b", "Linux process control"),
    (r"\bTCP_QUICKACK\b|\bSO_BINDTODEVICE\b", "Linux socket option"),
    (r"\"/proc/", "/proc"),
    (r"#\s*include\s*<(sys/epoll\.h|sys/eventfd\.h|sys/signalfd\.h|malloc\.h|linux/[^>]*)>", "Linux header"),
]
PATTERNS = [(re.compile(p), name) for p, name in LINUX_ONLY]

SWIFT_LINUX = re.compile(r"^(os\(Linux\)|canImport\(Glibc\))$")
SWIFT_NOT_LINUX = re.compile(r"^!\s*(os\(Linux\)|canImport\(Glibc\))$")
C_LINUX = re.compile(r"^(defined\s*\(?\s*__linux__\s*\)?|__linux__)$")
C_NOT_LINUX = re.compile(r"^!\s*(defined\s*\(?\s*__linux__\s*\)?|__linux__)$")


def dump_package(root):
    out = subprocess.run(["swift", "package", "dump-package"], cwd=root, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def applies_to_apple(condition):
    """A dependency with no condition, or one that names an Apple platform."""
    if not condition:
        return True
    names = condition.get("platformNames") or []
    return not names or any(n in ("macos", "ios", "tvos", "watchos", "visionos", "maccatalyst") for n in names)


def closure(package, roots):
    targets = {t["name"]: t for t in package["targets"]}
    seen, stack = [], list(roots)
    while stack:
        name = stack.pop()
        if name in seen or name not in targets:
            continue
        seen.append(name)
        for dep in targets[name].get("dependencies", []):
            for kind in ("byName", "target"):
                if kind in dep:
                    dep_name, condition = dep[kind][0], dep[kind][1] if len(dep[kind]) > 1 else None
                    if applies_to_apple(condition):
                        stack.append(dep_name)
    return [targets[n] for n in sorted(seen)]


def target_dir(root, target):
    if target.get("path"):
        return os.path.join(root, target["path"])
    base = "Tests" if target.get("type") == "test" else "Sources"
    return os.path.join(root, base, target["name"])


def strip_comments(line, in_block):
    """The code of one line: `//` comments and `/* */` blocks removed."""
    out, i = "", 0
    while i < len(line):
        if in_block:
            end = line.find("*/", i)
            if end < 0:
                return out, True
            i, in_block = end + 2, False
        elif line.startswith("/*", i):
            in_block, i = True, i + 2
        elif line.startswith("//", i):
            break
        elif line[i] == '"':
            end = line.find('"', i + 1)
            end = len(line) if end < 0 else end + 1
            out += line[i:end]
            i = end
        else:
            out += line[i]
            i += 1
    return out, in_block


def scan(path):
    """Findings of one file: (line number, name, text) outside Linux guards."""
    is_swift = path.endswith(".swift")
    linux, not_linux = (SWIFT_LINUX, SWIFT_NOT_LINUX) if is_swift else (C_LINUX, C_NOT_LINUX)
    findings = []
    # One entry per open #if: [guarded now, negated-linux #if (its #else is guarded)]
    stack = []
    in_block = False
    with open(path, encoding="utf-8", errors="replace") as f:
        for number, raw in enumerate(f, 1):
            code, in_block = strip_comments(raw.rstrip("\n"), in_block)
            directive = re.match(r"^\s*#\s*(if|ifdef|ifndef|elseif|elif|else|endif)\b\s*(.*)$", code)
            if directive:
                word, condition = directive.group(1), directive.group(2).strip()
                if word == "ifdef":
                    condition = "__linux__" if condition == "__linux__" else condition
                if word == "ifndef":
                    condition = "!" + condition
                if word in ("if", "ifdef", "ifndef"):
                    stack.append([bool(linux.match(condition)), bool(not_linux.match(condition))])
                elif word in ("elseif", "elif") and stack:
                    stack[-1][0] = bool(linux.match(condition))
                    stack[-1][1] = False
                elif word == "else" and stack:
                    stack[-1][0] = stack[-1][1]
                elif word == "endif" and stack:
                    stack.pop()
                continue
            if any(entry[0] for entry in stack):
                continue
            for pattern, name in PATTERNS:
                if pattern.search(code):
                    findings.append((number, name, raw.strip()))
    return findings


def check(root, package, roots):
    findings, scanned = [], []
    for target in closure(package, roots):
        directory = target_dir(root, target)
        scanned.append(target["name"])
        for base, _, files in os.walk(directory):
            for name in sorted(files):
                if name.endswith((".swift", ".h", ".c", ".modulemap")):
                    path = os.path.join(base, name)
                    for number, api, text in scan(path):
                        findings.append((os.path.relpath(path, root), number, api, text))
    return scanned, findings


def report(root, package, roots):
    scanned, findings = check(root, package, roots)
    print("check-portable: the client's module closure: " + ", ".join(scanned))
    for path, number, api, text in findings:
        print(f"{path}:{number}: Linux-only API ({api}) outside #if os(Linux): {text}")
    if findings:
        print(f"check-portable: {len(findings)} Linux-only use(s) outside guarded code")
        return 1
    print("check-portable: no Linux-only API outside guarded code")
    return 0


def self_test(here):
    """The fixtures: `clean` uses Linux API only in guarded code (every guard
    form) and passes; `dirty` adds exactly one unguarded use and fails with
    that one finding. Both have a Linux-only module reached only through a
    Linux-only dependency, and one outside the closure: neither is scanned."""
    fixtures = os.path.join(here, "check-portable-fixtures")
    ok = True
    for name, expected in (("clean", []), ("dirty", [("Sources/Net/Socket.swift", 14, "MSG_NOSIGNAL")])):
        root = os.path.join(fixtures, name)
        with open(os.path.join(root, "package.json")) as f:
            package = json.load(f)
        scanned, findings = check(root, package, ["Client"])
        got = [(p, n, a) for p, n, a, _ in findings]
        if scanned != ["Client", "Net"]:
            print(f"self-test {name}: closure {scanned}, expected ['Client', 'Net']")
            ok = False
        if got != expected:
            print(f"self-test {name}: findings {got}, expected {expected}")
            ok = False
    print("check-portable self-test: " + ("passed" if ok else "FAILED"))
    return 0 if ok else 1


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    if "--self-test" in argv:
        return self_test(here)
    root = os.path.dirname(here)
    roots = ROOTS
    package = None
    if "--root" in argv:
        root = argv[argv.index("--root") + 1]
    if "--roots" in argv:
        roots = argv[argv.index("--roots") + 1].split(",")
    if "--package-json" in argv:
        with open(argv[argv.index("--package-json") + 1]) as f:
            package = json.load(f)
    return report(root, package or dump_package(root), roots)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
