"""callgrind_annotate's totals for one callgrind output file, for the instruction-count scripts
(scripts/bench/get_instructions.sh, window_instructions.sh): total instructions and instructions per function
(names without file, arguments or object), functions under --threshold=100 folded together."""
import re
import subprocess


def profile(path):
    # --auto=no: valgrind 3.19's callgrind_annotate annotates source by default, whose per-line rows and inclusive
    # "=> callee" rows the pattern below would read as functions (a function's row then summed its self cost with
    # its lines' and its callees' costs).
    text = subprocess.run(["callgrind_annotate", "--auto=no", "--threshold=100", path], capture_output=True, text=True,
                          check=True).stdout
    total, functions = 0, {}
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)", line)
        if not m:
            continue
        count, name = int(m.group(1).replace(",", "")), m.group(2)
        if "PROGRAM TOTALS" in name:
            total = count
            continue
        name = re.sub(r"\(.*", "", re.sub(r"^[^:]*:(?=[A-Za-z_])", "", name.split(" [")[0]))
        functions[name] = functions.get(name, 0) + count
    return total, functions
