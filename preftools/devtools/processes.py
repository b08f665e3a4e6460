"""The process table from /proc (Linux), for measuring process trees: used by the benchmark
(peak RSS of a step) and by the Spark cluster harness (peak RSS per daemon, processes left)."""

from __future__ import annotations

import os

PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


def proc_table() -> dict[int, tuple[int, int, int]]:
    """pid -> (ppid, session id, rss bytes), one pass over /proc/<pid>/stat (the kernel here has
    no /proc/<pid>/task/*/children)."""
    table = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # the command name is in parentheses and may hold spaces: split after the last ')'
        fields = stat[stat.rindex(b")") + 2:].split(b" ")
        # fields[0] state, [1] ppid, [2] pgrp, [3] session, ..., [21] rss in pages
        table[int(entry.name)] = (int(fields[1]), int(fields[3]), int(fields[21]) * PAGE_SIZE)
    return table


def tree_rss(root: int, table: dict[int, tuple[int, int, int]] | None = None) -> int:
    """Resident set size of ``root`` and all its descendants, summed (``table``: a proc_table()
    already read, to measure several trees from one snapshot)."""
    table = proc_table() if table is None else table
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        stack.extend(children.get(pid, ()))
        total += table.get(pid, (0, 0, 0))[2]
    return total
