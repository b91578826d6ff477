"""Kafka's sampled Rate (org.apache.kafka.common.metrics.stats.Rate over SampledStat): a sum
kept in ``samples`` windows of ``window_ms``, measured over the windows still alive, and the
window length the measure divides by (which is also what the throttle time scales)."""

from __future__ import annotations


class SampledRate:
    __slots__ = ("samples", "window_ms", "_starts", "_values", "_current")

    def __init__(self, samples: int, window_ms: int, now_ms: int) -> None:
        self.samples, self.window_ms = samples, window_ms
        self._starts = [now_ms]
        self._values = [0.0]
        self._current = 0

    def record(self, value: float, now_ms: int) -> None:
        i = self._current
        if now_ms >= self._starts[i] + self.window_ms:  # the current sample is complete
            if len(self._starts) < self.samples:
                self._starts.append(now_ms)
                self._values.append(0.0)
                i = len(self._starts) - 1
            else:
                i = (i + 1) % self.samples
                self._starts[i], self._values[i] = now_ms, 0.0
            self._current = i
        self._values[i] += value

    def _purge(self, now_ms: int) -> None:
        expire = self.samples * self.window_ms
        for i, start in enumerate(self._starts):
            if now_ms - start >= expire:
                self._starts[i], self._values[i] = now_ms, 0.0

    def window_size_ms(self, now_ms: int) -> int:
        """Rate.windowSize: time since the oldest sample began, at least ``samples - 1`` whole
        windows."""
        self._purge(now_ms)
        elapsed = now_ms - min(self._starts)
        full = elapsed // self.window_ms
        if full < self.samples - 1:
            elapsed += (self.samples - 1 - full) * self.window_ms
        return elapsed

    def measure(self, now_ms: int) -> float:
        """The rate per second."""
        window = self.window_size_ms(now_ms)
        return sum(self._values) / (window / 1000.0)
