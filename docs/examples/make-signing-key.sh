#!/usr/bin/env bash
# make-signing-key.sh KEY.pem KID > jwks.json
# Makes an RSA-2048 signing key for an app's backend (KEY.pem, keep it
# secret) and prints the JWK Set with its public part, for
# `checklistd --auth-keys jwks.json`. Needs only openssl and bash.
set -euo pipefail
key=$1 kid=$2
b64url() { openssl base64 -A | tr '+/' '-_' | tr -d '='; }
(umask 077; openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$key" 2>/dev/null)
# The modulus as bytes: openssl prints it in hex; genpkey's exponent is 65537 ("AQAB").
n=$(printf "$(openssl rsa -in "$key" -noout -modulus | cut -d= -f2 | sed 's/../\\x&/g')" | b64url)
printf '{"keys": [{"kty": "RSA", "kid": "%s", "alg": "RS256", "use": "sig", "n": "%s", "e": "AQAB"}]}\n' "$kid" "$n"
