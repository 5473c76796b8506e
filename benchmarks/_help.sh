# Sourced by each benchmark driver after its header: `-h` or `--help` prints that header (what the driver runs and
# how to call it) and exits, before the driver reads an argument as its output folder and starts work.
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"
  exit 0
fi
