"""The prose workload of BenchmarkStreamAddProse, on the Python reference SDK.

64 KiB of prose in 4,101 chunks: the reference's own streaming client appends
each chunk to its text and passes the whole text to process_llm_response once
at the end. Prints the minimum and the median time of one run of the workload
over REPS repetitions of 50 runs each.

    pip install mcs-driver-core==0.4.1   # or PYTHONPATH=<its src folder>
    python3 prose.py [REPS]
"""

import statistics
import sys
import time
from dataclasses import dataclass

from mcs.driver.core import BaseDriver, DriverMeta, Tool, ToolParameter


@dataclass(frozen=True)
class _Meta(DriverMeta):
    id: str = "prose-bench"
    name: str = "Prose benchmark"
    version: str = "0.0.1"
    bindings: tuple = ()
    supported_llms: tuple = ("*",)
    capabilities: tuple = ()


class EchoDriver(BaseDriver):
    """One tool, echo, as the Go benchmark's calcDriver has."""

    meta: DriverMeta = _Meta()

    def list_tools(self):
        text = ToolParameter(name="text", description="The text.", required=True, schema={"type": "string"})
        return [Tool(name="echo", description="Echoes its text.", parameters=[text])]

    def execute_tool(self, tool_name, arguments):
        return arguments.get("text")


SIZE, CHUNKS = 64 << 10, 4101
SENTENCE = "The quick brown fox jumps over the lazy dog; it's {not} a call. "
PROSE = (SENTENCE * (SIZE // len(SENTENCE) + 1))[:SIZE]
PARTS = [PROSE[i * SIZE // CHUNKS:(i + 1) * SIZE // CHUNKS] for i in range(CHUNKS)]


def workload(driver):
    text = ""
    for part in PARTS:
        text += part
    response = driver.process_llm_response(text, streaming=True)
    if response.call_executed or len(text) != SIZE:
        raise SystemExit("the prose workload ran a call or lost text")


def main():
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    driver = EchoDriver()
    runs = 50
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        for _ in range(runs):
            workload(driver)
        times.append((time.perf_counter() - start) / runs)
    print(f"prose 64 KiB in {CHUNKS} chunks: min {min(times) * 1e6:.1f} µs, median {statistics.median(times) * 1e6:.1f} µs")


if __name__ == "__main__":
    main()
