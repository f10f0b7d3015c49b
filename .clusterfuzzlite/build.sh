#!/bin/bash -eu
# Builds every target of fuzz/ and ships each with its seeds and the shared dictionary,
# under the names ClusterFuzzLite looks for next to a fuzzer.
cd "$SRC/asr-ctk/fuzz"
cargo fuzz build -O
release=target/x86_64-unknown-linux-gnu/release
for source in fuzz_targets/*.rs; do
  target=$(basename "$source" .rs)
  cp "$release/$target" "$OUT/"
  cp asr.dict "$OUT/$target.dict"
  if [ -d "seeds/$target" ]; then
    (cd "seeds/$target" && zip -q -r "$OUT/${target}_seed_corpus.zip" .)
  fi
done
