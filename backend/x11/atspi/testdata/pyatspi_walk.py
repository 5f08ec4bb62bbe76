# The baseline the walk is measured against: a plain pyatspi walk of one
# application's window that reads role, name, states and extents of every
# node, the way AT-SPI clients usually do it. Timed in-process.
#   pyatspi_walk.py APP_NAME WINDOW_TITLE_PREFIX WALKS
# prints one line per walk: "<nodes> <milliseconds>".
import sys
import time

import pyatspi


def find_window(app_name, title):
    desktop = pyatspi.Registry.getDesktop(0)
    for app in desktop:
        if app is None or app.name != app_name:
            continue
        for win in app:
            if win is not None and win.name.startswith(title):
                return win
    return None


def walk(node):
    count = 1
    node.getRoleName()
    node.name
    node.getState().getStates()
    try:
        node.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
    except NotImplementedError:
        pass
    for child in node:
        if child is not None:
            count += walk(child)
    return count


def main():
    app_name, title, walks = sys.argv[1], sys.argv[2], int(sys.argv[3])
    win = find_window(app_name, title)
    if win is None:
        sys.exit("no window %r of %r" % (title, app_name))
    for _ in range(walks):
        start = time.perf_counter()
        n = walk(win)
        print(n, (time.perf_counter() - start) * 1000.0, flush=True)


main()
