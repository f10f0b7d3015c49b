#!/bin/sh
# A one-shot validator that accepts every stream: lenient on every rule.
if [ -n "$ASR_CTK_HANDSHAKE" ]; then
  echo '{"type":"started","protocol":1,"implementation":{"name":"accepts-all","version":"0.1.0","language":"sh"},"roles":["validator"],"formatVersions":["0.1"]}'
  exit 0
fi
cat > /dev/null
echo '{"type":"answered","streams":[{"valid":true,"diagnostics":[]}]}'
