"""bench/load.py --scrape: /metrics read during the load as Prometheus would, to measure
what the metrics cost (issue #28; docs/OPERATING.md)."""

from __future__ import annotations

import re
import threading
import time
import urllib.request
from pathlib import Path


class Scraper:
    """GET /metrics from every node's ops port (--metrics-port 0, read from its log) every
    ``every`` seconds in a thread, as Prometheus would (its default is every 15 s)."""

    def __init__(self, logs: list[Path], every: float):
        self.urls = []
        for path in logs:
            found = re.search(r"metrics on (http://\S+/metrics)", path.read_text())
            if found is None:
                raise SystemExit(f"--scrape: the server logged no metrics address (an older wildtable?): {path}")
            self.urls.append(found.group(1))
        self.every, self.count, self.bytes, self.seconds = every, 0, 0, 0.0
        self._stop = threading.Event()

        def run():
            while not self._stop.wait(self.every):
                for url in self.urls:
                    t0 = time.perf_counter()
                    with urllib.request.urlopen(url, timeout=10) as r:
                        self.bytes += len(r.read())
                    self.seconds += time.perf_counter() - t0
                    self.count += 1
        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()

    def stop(self) -> dict:
        self._stop.set()
        self._thread.join()
        return {"count": self.count, "every_s": self.every, "mean_bytes": self.bytes // max(1, self.count),
                "mean_ms": self.seconds / max(1, self.count) * 1000}
