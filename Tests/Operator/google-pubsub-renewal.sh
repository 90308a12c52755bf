#!/usr/bin/env bash
# The operator's path of README "Asking the stores", done as written: `scripts/dev serve` with a
# Google service account, an SDK purchase posted by a backend, then Google's Pub/Sub pushing
# SUBSCRIPTION_RENEWED and nothing else; `ledger subscriptions` must show the new expiry, which
# only the Play Developer API knows. The one difference from production: the API is
# shared/tools/fake-store-api on loopback (LEDGER_GOOGLE_API_URL), with the service account key it
# issues. Its own database on the private cluster (DATABASE_URL, as the README allows), dropped at
# the end. Exit 0 when every check holds; 1 with the reason otherwise. Run by `scripts/dev test`.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
FAKE=${FAKE_STORE_API:-$ROOT/../shared/tools/fake-store-api}
work=$(mktemp -d)
db="operator_google_$$"
pids=()
fail() { echo "google-pubsub-renewal: FAILED: $*" >&2; for f in "$work"/*.log; do echo "--- $f" >&2; tail -n 20 "$f" >&2; done; exit 1; }
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    psql "$LEDGER_TEST_SERVER dbname=postgres" -qc "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1 || true
    rm -rf "$work"
}
# Waits up to $1 seconds for the command after it to succeed.
within() { local n=$(( $1 * 4 )); shift; for _ in $(seq "$n"); do "$@" && return 0; sleep 0.25; done; return 1; }

eval "$("$ROOT/scripts/dev" env)"
trap cleanup EXIT
psql "$LEDGER_TEST_SERVER dbname=postgres" -qc "CREATE DATABASE $db" >/dev/null
export DATABASE_URL="$LEDGER_TEST_SERVER dbname=$db"

# Google, as the fake: a subscription whose renewal Google knows (order ..0, paid to April), not
# yet acknowledged.
cat > "$work/state.json" <<'JSON'
{"credentials": "keys/credentials.json",
 "google": {"packageName": "com.example.game",
  "subscriptionsV2": {"gtok-operator": {
    "kind": "androidpublisher#subscriptionPurchaseV2", "regionCode": "US", "startTime": "2026-02-01T00:00:00Z",
    "subscriptionState": "SUBSCRIPTION_STATE_ACTIVE", "latestOrderId": "GPA.7777-6666-5555-44444..0",
    "acknowledgementState": "ACKNOWLEDGEMENT_STATE_PENDING",
    "lineItems": [{"productId": "vip_month", "expiryTime": "2026-04-01T00:00:00Z",
                   "latestSuccessfulOrderId": "GPA.7777-6666-5555-44444..0",
                   "autoRenewingPlan": {"autoRenewEnabled": true,
                                        "recurringPrice": {"currencyCode": "USD", "units": "4", "nanos": 990000000}}}]}}},
 "apple": {"bundleId": "com.example.game"}}
JSON
"$FAKE" keys --out "$work/keys" >/dev/null
"$FAKE" --state "$work/state.json" --calls "$work/calls.jsonl" --port 0 > "$work/fake.log" 2>&1 &
pids+=($!)
within 20 grep -q '^listening ' "$work/fake.log" || fail "the store fake did not start"
fake_url=$(sed -n 's/^listening //p' "$work/fake.log" | head -n 1)
"$FAKE" keys --out "$work/keys" --base-url "$fake_url" >/dev/null

# README: the service account, the package, the push's shared secret; then `scripts/dev serve`.
export LEDGER_GOOGLE_SERVICE_ACCOUNT_FILE="$work/keys/google-service-account.json"
export LEDGER_GOOGLE_API_URL="$fake_url"
export LEDGER_GOOGLE_PACKAGE_NAMES=com.example.game
export LEDGER_GOOGLE_PUSH_SECRET="push-secret-$$"
export LEDGER_HTTP_PORT=0
"$ROOT/scripts/dev" serve > "$work/serve.log" 2>&1 &
serve_pid=$!
pids+=("$serve_pid")
# (scripts/dev serve builds first: seconds when the release build is current, minutes when not)
within 900 grep -q '^listening on ' "$work/serve.log" || fail "ledger serve did not start"
base=$(sed -n 's/^listening on //p' "$work/serve.log" | head -n 1)

KEY=$("$ROOT/scripts/dev" ledger keys add --role writer)
# The backend reports the purchase its game client made (the Gamebase SDK's fields).
answer=$(curl -s -H "Authorization: Bearer $KEY" "$base/v1/purchases" -d '{"userId":"u-operator","storeCode":"GG",
  "productId":"vip_month","productType":"AUTO_RENEWABLE","price":"4.99","currency":"USD","paymentSeq":"P-OP-1",
  "purchaseToken":"gtok-operator","transactionId":"GPA.7777-6666-5555-44444","purchaseTime":"2026-02-01T00:00:00Z",
  "expiryTime":"2026-03-01T00:00:00Z"}')
[[ $answer == *'"status":"recorded"'* ]] || fail "the purchase: $answer"

# A month later Pub/Sub pushes SUBSCRIPTION_RENEWED (type 2): a token, nothing else.
data=$(printf '%s' '{"version":"1.0","packageName":"com.example.game","eventTimeMillis":"1772323205000","subscriptionNotification":{"version":"1.0","notificationType":2,"purchaseToken":"gtok-operator","subscriptionId":"vip_month"}}' | base64 -w0)
answer=$(curl -s -o /dev/null -w '%{http_code}' "$base/notifications/google?token=$LEDGER_GOOGLE_PUSH_SECRET" \
  -d "{\"message\":{\"data\":\"$data\",\"messageId\":\"op-m-1\",\"publishTime\":\"2026-03-01T00:00:05Z\"},\"subscription\":\"projects/p/subscriptions/play\"}")
[[ $answer == 2* ]] || fail "the push was answered $answer"

# The server's jobs ask Google; moments later the subscription shows the renewal.
renewed() {
    "$ROOT/scripts/dev" ledger subscriptions --user u-operator --at 2026-03-15T00:00:00Z --json > "$work/subscriptions.json" 2>>"$work/query.log"
    grep -q '"expiryTime":"2026-04-01T00:00:00.000Z"' "$work/subscriptions.json" &&
        grep -q '"latestPaymentSeq":"GPA.7777-6666-5555-44444..0"' "$work/subscriptions.json"
}
within 60 renewed || fail "no renewal in ledger subscriptions: $(cat "$work/subscriptions.json")"
# And the purchase was acknowledged exactly once (Google refunds what is not, after three days).
acknowledged() { [ "$(grep -c ':acknowledge"' "$work/calls.jsonl")" = 1 ]; }
within 30 acknowledged || fail "acknowledgements: $(grep -c ':acknowledge"' "$work/calls.jsonl" || true)"
sleep 2
acknowledged || fail "acknowledged more than once"
if grep -q 'gtok-operator' "$work/serve.log"; then fail "the purchase token is in the server's log"; fi

kill -TERM "$serve_pid"
within 30 bash -c "! kill -0 $serve_pid 2>/dev/null" || fail "ledger serve did not stop on SIGTERM"
echo "google-pubsub-renewal: ok (renewal learned from subscriptionsv2 through ledger serve, acknowledged once)"
