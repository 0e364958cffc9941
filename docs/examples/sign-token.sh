#!/usr/bin/env bash
# sign-token.sh KEY.pem KID NAMESPACE SECONDS [ISSUER] [AUDIENCE]
# Prints a token (JWT, RS256) that opens NAMESPACE for SECONDS, signed with
# KEY.pem under KID: what an app's backend hands a signed-in user. Needs
# only openssl and bash.
set -euo pipefail
key=$1 kid=$2 namespace=$3 seconds=$4 issuer=${5:-} audience=${6:-}
b64url() { openssl base64 -A | tr '+/' '-_' | tr -d '='; }
now=$(date +%s)
claims=$(printf '"sub":"%s","iat":%d,"exp":%d' "$namespace" "$now" $((now + seconds)))
[ -n "$issuer" ] && claims+=$(printf ',"iss":"%s"' "$issuer")
[ -n "$audience" ] && claims+=$(printf ',"aud":"%s"' "$audience")
header=$(printf '{"alg":"RS256","typ":"JWT","kid":"%s"}' "$kid" | b64url)
payload=$(printf '{%s}' "$claims" | b64url)
signature=$(printf '%s.%s' "$header" "$payload" | openssl dgst -sha256 -sign "$key" -binary | b64url)
printf '%s.%s.%s\n' "$header" "$payload" "$signature"
