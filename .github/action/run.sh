#!/usr/bin/env bash
# The action's run step: `asr-ctk run` with the action's inputs, then the report's summary
# and the step's outputs. Every input comes in an environment variable, never as shell text:
#
#   ASR_CTK          the asr-ctk binary (default: asr-ctk on PATH)
#   INPUT_ADAPTER    the adapter command line (empty: the kit's reference implementation)
#   INPUT_EXPECT     an expectations file (--expect)
#   INPUT_SHARD      i/n (--shard)
#   INPUT_ROLE       validator, reader or producer (--role)
#   INPUT_ARGS       more arguments, split into words as a shell splits them (quotes and
#                    backslashes), never expanded or evaluated
#   INPUT_OUT        the report directory (--out; default asr-ctk-report)
#   INPUT_NAME       the artifact's name and the SARIF category (default: from the job, the
#                    role and the shard)
#
# Appends report.md to $GITHUB_STEP_SUMMARY and writes out, name, status and sarif (when the
# run wrote one) to $GITHUB_OUTPUT, when those are set. Exits with the run's exit status.
set -euo pipefail

kit=${ASR_CTK:-asr-ctk}
out=${INPUT_OUT:-asr-ctk-report}

argv=(run --out "$out")
if [ -n "${INPUT_ADAPTER:-}" ]; then
  argv+=(--adapter "$INPUT_ADAPTER")
fi
if [ -n "${INPUT_EXPECT:-}" ]; then
  argv+=(--expect "$INPUT_EXPECT")
fi
if [ -n "${INPUT_SHARD:-}" ]; then
  argv+=(--shard "$INPUT_SHARD")
fi
if [ -n "${INPUT_ROLE:-}" ]; then
  argv+=(--role "$INPUT_ROLE")
fi
if [[ ${INPUT_ARGS:-} =~ [^[:space:]] ]]; then
  # xargs splits the words (quotes, backslashes) and expands nothing; printf hands them
  # back NUL-separated. Unbalanced quotes are a usage error.
  words=$(mktemp)
  trap 'rm -f "$words"' EXIT
  if ! printf '%s\n' "$INPUT_ARGS" | xargs printf '%s\0' >"$words"; then
    echo "asr-ctk action: args is not a list of words: $INPUT_ARGS" >&2
    if [ -n "${GITHUB_OUTPUT:-}" ]; then
      echo "status=2" >>"$GITHUB_OUTPUT"
    fi
    exit 2
  fi
  mapfile -d '' -t extra <"$words"
  argv+=("${extra[@]}")
fi

name=${INPUT_NAME:-}
if [ -z "$name" ]; then
  name="asr-ctk-report-${GITHUB_JOB:-run}"
  if [ -n "${INPUT_ROLE:-}" ]; then
    name+="-$INPUT_ROLE"
  fi
  if [ -n "${INPUT_SHARD:-}" ]; then
    name+="-shard-${INPUT_SHARD//\//-of-}"
  fi
fi

# The outputs first: the upload steps after this one run also when the run fails.
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  {
    echo "out=$out"
    echo "name=$name"
  } >>"$GITHUB_OUTPUT"
fi

printf 'asr-ctk action: %s' "$kit" >&2
printf ' %q' "${argv[@]}" >&2
printf '\n' >&2

status=0
"$kit" "${argv[@]}" || status=$?

if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  report="$out/report.md"
  # A step's summary holds at most 1 MiB: a longer report is cut, the whole one is in the
  # artifact.
  limit=$((1000 * 1000))
  if [ ! -f "$report" ]; then
    printf '## asr-ctk run\n\nNo report was written (exit status %s).\n' "$status" >>"$GITHUB_STEP_SUMMARY"
  elif [ "$(wc -c <"$report")" -le "$limit" ]; then
    cat "$report" >>"$GITHUB_STEP_SUMMARY"
  else
    head -c "$limit" "$report" >>"$GITHUB_STEP_SUMMARY"
    printf '\n\n_(cut: the whole report is report.md in the artifact %s)_\n' "$name" >>"$GITHUB_STEP_SUMMARY"
  fi
fi

if [ -n "${GITHUB_OUTPUT:-}" ]; then
  echo "status=$status" >>"$GITHUB_OUTPUT"
  if [ -f "$out/sarif.json" ]; then
    echo "sarif=$out/sarif.json" >>"$GITHUB_OUTPUT"
  fi
fi
exit "$status"
