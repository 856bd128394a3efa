#!/usr/bin/env python3
"""Generates man/userctl.1 and man/userlistd.8 from the binaries' own --help text, so the
manual pages say exactly what --help says.

    scripts/gen-man.py [BINDIR]          write the pages (BINDIR defaults to .build/debug)
    scripts/gen-man.py --check [BINDIR]  exit 1 when a page is out of date

Lines ending in ':' (and 'Options:') become sections; '  --opt VALUE   text' lines become
tagged paragraphs; everything else is kept as preformatted text.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def help_text(binary, *args):
    # A fixed environment, so the pages do not depend on who generates them.
    env = {"PATH": "/usr/bin:/bin", "HOME": "/home/USER", "LANG": "C.UTF-8"}
    return subprocess.run([binary, *args], capture_output=True, text=True, env=env, check=True).stdout


def escape(text):
    text = text.replace("\\", "\\e").replace("-", "\\-")
    if text.startswith(".") or text.startswith("'"):
        text = "\\&" + text
    return text


OPTION = re.compile(r"^\s{2}(-\S.*?)\s{2,}(\S.*)$")
HEADING = re.compile(r"^([A-Za-z][A-Za-z ()'\-]*):\s*$")


def joined_options(lines):
    """An option too long for the help column has its help on the next line: one line again."""
    out = []
    for line in lines:
        if out and re.match(r"^\s{2}-\S", out[-1]) and not OPTION.match(out[-1]) and re.match(r"^\s{20,}\S", line):
            out[-1] = out[-1] + "  " + line.strip()
        else:
            out.append(line)
    return out


def body(text, skip=()):
    out = []
    preformatted = False
    for line in joined_options(text.rstrip("\n").split("\n")):
        if any(line.startswith(s) for s in skip):
            continue
        heading = HEADING.match(line)
        option = OPTION.match(line)
        if heading:
            if preformatted:
                out.append(".fi")
                preformatted = False
            out.append(".SH " + heading.group(1).upper())
        elif option:
            if preformatted:
                out.append(".fi")
                preformatted = False
            out.append(".TP")
            out.append(".B " + escape(option.group(1).strip()))
            out.append(escape(option.group(2)))
        elif line.strip() == "":
            if preformatted:
                out.append(".fi")
                preformatted = False
            out.append(".PP")
        else:
            if not preformatted:
                out.append(".nf")
                preformatted = True
            out.append(escape(line))
    if preformatted:
        out.append(".fi")
    return out


def userctl_page(bindir):
    userctl = os.path.join(bindir, "userctl")
    main = help_text(userctl, "--help")
    commands = re.findall(r"^  (\S+)\s{2,}", main.split("commands:")[1].split("global options:")[0], re.M)
    text = [".SH DESCRIPTION"]
    text += body(main)
    text.append(".SH COMMAND DETAILS")
    for command in commands:
        text.append(".SS " + command)
        detail = help_text(userctl, command, "--help").split("\nglobal options:")[0]
        text += body(detail)
    lines = [
        '.TH USERCTL 1 "" "userlistd" "userlistd manual"',
        ".SH NAME",
        "userctl \\- browse and edit the users served by userlistd",
    ] + text + [".SH SEE ALSO", "\\fBuserlistd\\fR(8)"]
    return "\n".join(lines) + "\n"


def userlistd_page(bindir):
    text = help_text(os.path.join(bindir, "userlistd"), "--help")
    lines = [
        '.TH USERLISTD 8 "" "userlistd" "userlistd manual"',
        ".SH NAME",
        "userlistd \\- serve the user list's screens as sessions over a Unix socket",
        ".SH DESCRIPTION",
    ] + body(text, skip=("Defaults here:",)) + [
        ".SH FILES",
        ".TP",
        ".B /etc/userlistd.conf",
        "settings as key = value lines (the option names without dashes)",
        ".TP",
        ".B /run/userlistd/userlistd.sock",
        "the socket when run as root or by systemd; otherwise $XDG_RUNTIME_DIR/userlistd.sock",
        ".TP",
        ".B /var/lib/userlistd/users.sqlite3",
        "the store when run as root or by systemd (StateDirectory=); otherwise $XDG_DATA_HOME/userlistd/",
        ".SH SEE ALSO",
        "\\fBuserctl\\fR(1), \\fBsystemd.socket\\fR(5), \\fBsystemd.service\\fR(5)",
    ]
    return "\n".join(lines) + "\n"


def main():
    args = sys.argv[1:]
    check = "--check" in args
    args = [a for a in args if a != "--check"]
    bindir = args[0] if args else os.path.join(ROOT, ".build", "debug")
    pages = {"man/userctl.1": userctl_page(bindir), "man/userlistd.8": userlistd_page(bindir)}
    stale = []
    for path, text in pages.items():
        full = os.path.join(ROOT, path)
        old = open(full, encoding="utf-8").read() if os.path.exists(full) else None
        if old != text:
            stale.append(path)
            if not check:
                with open(full, "w", encoding="utf-8") as f:
                    f.write(text)
    if check and stale:
        print("out of date (run scripts/gen-man.py): " + ", ".join(stale), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
