#!/usr/bin/env python3
"""Support spans of Debian and Ubuntu releases, from Debian's distro-info-data.

Reads debian.csv and ubuntu.csv (the release tables that the distro-info-data
package installs in /usr/share/distro-info/) from INPUT_DIR, computes for
every release how many days it was (or is scheduled to be) supported, writes
one CSV report and prints a short summary.

Usage:
    distro_spans.py [--today YYYY-MM-DD] [INPUT_DIR [OUTPUT]]

    INPUT_DIR  directory holding debian.csv and ubuntu.csv   (default /work)
    OUTPUT     path of the report                            (default
               /work/distro-report.csv; replaced atomically)
    --today    releases dated after this day count as not yet released
               (default: today's date in UTC)

Report columns, one row per release, Debian first, each in input order:
    distro          "debian" or "ubuntu" (the input file's name)
    version         as in the input ("12", "24.04 LTS", ...)
    codename        as in the input ("Bookworm", "Noble Numbat", ...)
    series          as in the input ("bookworm", "noble", ...)
    release         release date, YYYY-MM-DD
    eol             end of regular support, YYYY-MM-DD
    support_days    days from release to eol
    lts_days        days from release to eol-lts      (Debian LTS)
    elts_days       days from release to eol-elts     (Debian Extended LTS)
    server_days     days from release to eol-server   (Ubuntu server)
    esm_days        days from release to eol-esm      (Ubuntu ESM)
    legacy_days     days from release to eol-legacy   (Ubuntu Legacy add-on)
    extended_kind   which of those columns has the latest date ("eol-elts")
    extended_eol    that date
    extended_days   days from release to that date
A *_days or extended_* field is empty when the table has no such column or
leaves it blank for that release.

Rows are skipped (and counted in the summary) when the release date is blank
or later than --today (not yet released), or the eol date is blank.

Exit status: 0 report written; 1 unusable input (a missing file or column,
a malformed row, a date that is not a real YYYY-MM-DD day, an end of support
before the release) or the report could not be written; 2 usage error.
Standard library only.
"""

import argparse
import csv
import datetime
import os
import re
import sys
import tempfile

DISTROS = ("debian", "ubuntu")
REQUIRED = ("version", "codename", "series", "release", "eol")
# (input column, report column), in report order.
EXTENDED = (
    ("eol-lts", "lts_days"),
    ("eol-elts", "elts_days"),
    ("eol-server", "server_days"),
    ("eol-esm", "esm_days"),
    ("eol-legacy", "legacy_days"),
)
REPORT_COLUMNS = (
    ["distro", "version", "codename", "series", "release", "eol", "support_days"]
    + [col for _, col in EXTENDED]
    + ["extended_kind", "extended_eol", "extended_days"]
)
DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}\Z")


class UnusableInput(Exception):
    """The input cannot be turned into a trustworthy report."""


def parse_date(text, where, column):
    """TEXT as a date; raises UnusableInput naming WHERE and COLUMN."""
    if not DATE_RE.match(text):
        raise UnusableInput(f"{where}: {column}: '{text}' is not a date (YYYY-MM-DD)")
    try:
        return datetime.date.fromisoformat(text)
    except ValueError as exc:
        raise UnusableInput(f"{where}: {column}: '{text}': {exc}") from None


def read_table(path):
    """Yields (line number, {column: stripped value}) for each data row."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f, strict=True))
    except FileNotFoundError:
        raise UnusableInput(f"{path}: no such file (install distro-info-data, "
                            "or copy /usr/share/distro-info/*.csv here)") from None
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise UnusableInput(f"{path}: cannot read: {exc}") from None

    if not rows or not any(cell.strip() for cell in rows[0]):
        raise UnusableInput(f"{path}: empty file, expected a header line")
    header = [cell.strip() for cell in rows[0]]
    missing = [col for col in REQUIRED if col not in header]
    if missing:
        raise UnusableInput(f"{path}:1: header lacks column(s) {', '.join(missing)}")
    dupes = sorted({col for col in header if header.count(col) > 1})
    if dupes:
        raise UnusableInput(f"{path}:1: column(s) named twice: {', '.join(dupes)}")
    known = set(REQUIRED) | {col for col, _ in EXTENDED} | {"created"}
    unknown = [col for col in header if col not in known]
    if unknown:
        print(f"{path}:1: note: ignoring column(s) {', '.join(unknown)}", file=sys.stderr)

    # csv.reader counts physical lines; the tables have no quoted newlines, so
    # row index + 1 is the line number.
    for index, cells in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in cells):
            continue  # blank line
        if len(cells) > len(header):
            raise UnusableInput(f"{path}:{index}: {len(cells)} fields, "
                                f"the header has {len(header)}")
        # Short rows are normal: trailing columns that do not apply are left off.
        values = {col: "" for col in header}
        values.update(zip(header, (cell.strip() for cell in cells)))
        yield index, values


def spans(distro, path, today, counts):
    """Report rows of one table; updates COUNTS (skip reasons)."""
    out = []
    for line, row in read_table(path):
        where = f"{path}:{line}"
        if not row["release"]:
            counts["unreleased"] += 1
            continue
        release = parse_date(row["release"], where, "release")
        if release > today:
            counts["unreleased"] += 1
            continue
        if not row["eol"]:
            counts["no_eol"] += 1
            continue
        eol = parse_date(row["eol"], where, "eol")
        if not row["series"]:
            raise UnusableInput(f"{where}: series is blank")

        def days_to(end, column):
            days = (end - release).days
            if days < 0:
                raise UnusableInput(f"{where}: {column} {end} is before release {release}")
            return days

        report = {
            "distro": distro,
            "version": row["version"],
            "codename": row["codename"],
            "series": row["series"],
            "release": release.isoformat(),
            "eol": eol.isoformat(),
            "support_days": days_to(eol, "eol"),
            "extended_kind": "",
            "extended_eol": "",
            "extended_days": "",
        }
        latest = None
        for column, report_column in EXTENDED:
            text = row.get(column, "")
            if not text:
                report[report_column] = ""
                continue
            end = parse_date(text, where, column)
            report[report_column] = days_to(end, column)
            if latest is None or end > latest[1]:
                latest = (column, end)
        if latest is not None:
            report["extended_kind"] = latest[0]
            report["extended_eol"] = latest[1].isoformat()
            report["extended_days"] = days_to(latest[1], latest[0])
        out.append(report)
    return out


def write_report(rows, output):
    """Writes ROWS to OUTPUT through a temporary file and a rename."""
    directory = os.path.dirname(os.path.abspath(output))
    fd, tmp = tempfile.mkstemp(prefix=".distro-report.", dir=directory)
    try:
        with os.fdopen(fd, "w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=REPORT_COLUMNS, lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)
        os.chmod(tmp, 0o644)
        os.replace(tmp, output)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def years(days):
    return f"{days / 365.2425:.1f} years"


def label(row):
    return f"{row['version'] or row['series']} {row['codename']}".strip()


def summary(distro, rows, counts):
    lines = []
    skipped = counts["unreleased"] + counts["no_eol"]
    lines.append(f"{distro}: {len(rows)} releases with a support span; skipped "
                 f"{skipped} ({counts['unreleased']} not yet released, "
                 f"{counts['no_eol']} without an eol date)")
    if not rows:
        return lines
    average = sum(r["support_days"] for r in rows) / len(rows)
    # Ties go to the earliest release (the first in the table).
    longest = max(rows, key=lambda r: r["support_days"])
    shortest = min(rows, key=lambda r: r["support_days"])
    lines.append(f"  average support  {average:.0f} days ({years(average)})")
    lines.append(f"  longest support  {label(longest)}: {longest['support_days']} days "
                 f"({longest['release']} to {longest['eol']})")
    lines.append(f"  shortest support {label(shortest)}: {shortest['support_days']} days "
                 f"({shortest['release']} to {shortest['eol']})")
    extended = [r for r in rows if r["extended_kind"]]
    if extended:
        ext = max(extended, key=lambda r: r["extended_days"])
        lines.append(f"  longest extended {label(ext)}: {ext['extended_days']} days "
                     f"({ext['release']} to {ext['extended_eol']}, {ext['extended_kind']}; "
                     f"{len(extended)} releases have extended support)")
    return lines


def main(argv):
    parser = argparse.ArgumentParser(
        description="Support spans of Debian and Ubuntu releases (distro-info-data).")
    parser.add_argument("input_dir", nargs="?", default="/work",
                        help="directory with debian.csv and ubuntu.csv (default /work)")
    parser.add_argument("output", nargs="?", default=None,
                        help="report path (default /work/distro-report.csv)")
    parser.add_argument("--today", metavar="YYYY-MM-DD",
                        help="count releases up to this day as released (default: today, UTC)")
    args = parser.parse_args(argv)
    output = args.output or "/work/distro-report.csv"

    try:
        if args.today:
            today = parse_date(args.today, "--today", "date")
        else:
            today = datetime.datetime.now(datetime.timezone.utc).date()
        rows, lines = [], []
        for distro in DISTROS:
            counts = {"unreleased": 0, "no_eol": 0}
            table = spans(distro, os.path.join(args.input_dir, f"{distro}.csv"), today, counts)
            rows.extend(table)
            lines.extend(summary(distro, table, counts))
        if not rows:
            raise UnusableInput(f"{args.input_dir}: no release has both a release "
                                "and an eol date")
    except UnusableInput as exc:
        print(f"distro_spans: {exc}", file=sys.stderr)
        return 1

    try:
        write_report(rows, output)
    except OSError as exc:
        print(f"distro_spans: cannot write the report {output}: {exc.strerror or exc}",
              file=sys.stderr)
        return 1

    print(f"{len(rows)} releases as of {today.isoformat()}, report written to {output}")
    for line in lines:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
