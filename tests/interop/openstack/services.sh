#!/usr/bin/env bash
# Starts Keystone, Barbican (simple_crypto) and Glance (file store) from Debian 12's packages on 127.0.0.1
# random ports, with sqlite databases under DIR, for tests/cli/openstack.rs. Usage: services.sh DIR WATCH_PID.
# Writes DIR/env (ports, admin password) and DIR/clouds.yaml, then DIR/ready; stays as a watchdog that stops
# every service (by PID) when WATCH_PID is gone or it gets SIGTERM. Logs: DIR/*.log. Fails by writing DIR/failed.
set -euo pipefail
dir=$1 watch=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$dir"
cd "$dir"
pids=()
stop() { for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done; sleep 0.5;
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done; }
fail() { echo "$*" >"$dir/failed"; stop; exit 1; }
trap 'stop; exit 0' TERM INT
trap 'fail "services.sh failed at line $LINENO"' ERR

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
KPORT=$(port) BPORT=$(port) GPORT=$(port)
ADMIN_PW=admin-$RANDOM$RANDOM SERVICE_PW=service-$RANDOM$RANDOM
KURL=http://127.0.0.1:$KPORT
wal() { sqlite3 "$1" 'PRAGMA journal_mode=WAL;' >/dev/null; }
authtoken() { cat <<EOC
[keystone_authtoken]
www_authenticate_uri = $KURL/v3
auth_url = $KURL/v3
auth_type = password
project_domain_name = Default
user_domain_name = Default
project_name = service
username = $1
password = $SERVICE_PW
region_name = RegionOne
service_token_roles_required = true
EOC
}
uwsgi_run() { # name port wsgi-file [env...]; UWSGI_PROCESSES (default 2)
  local name=$1 p=$2 file=$3; shift 3
  env "$@" uwsgi --plugins python3 --http11-socket "127.0.0.1:$p" --wsgi-file "$file" \
    --processes "${UWSGI_PROCESSES:-2}" --threads 1 \
    --lazy-apps --master --die-on-term --need-app --buffer-size 65535 \
    --post-buffering 65536 >"$dir/$name.log" 2>&1 &
  pids+=($!)
}
wait_http() { # url name
  for _ in $(seq 1 600); do
    curl -s -o /dev/null "$1" && return 0
    sleep 0.1
  done
  fail "$2 did not answer at $1: $(tail -5 "$dir/$2.log")"
}

# Keystone
mkdir -p keystone/fernet keystone/credential
cat >keystone/keystone.conf <<EOC
[DEFAULT]
use_stderr = true
[database]
connection = sqlite:///$dir/keystone/keystone.db
[token]
provider = fernet
expiration = ${KEYSTONE_TOKEN_EXPIRATION:-3600}
[fernet_tokens]
key_repository = $dir/keystone/fernet
[fernet_receipts]
key_repository = $dir/keystone/fernet
[credential]
key_repository = $dir/keystone/credential
[identity]
password_hash_rounds = 4
[oslo_policy]
enforce_new_defaults = false
enforce_scope = false
EOC
export OS_KEYSTONE_CONFIG_FILES=$dir/keystone/keystone.conf
km() { keystone-manage --config-file "$dir/keystone/keystone.conf" "$@" >>"$dir/keystone-manage.log" 2>&1; }
km db_sync
wal keystone/keystone.db
km fernet_setup --keystone-user root --keystone-group root
km credential_setup --keystone-user root --keystone-group root
km bootstrap --bootstrap-password "$ADMIN_PW" --bootstrap-admin-url "$KURL/v3/" \
  --bootstrap-internal-url "$KURL/v3/" --bootstrap-public-url "$KURL/v3/" --bootstrap-region-id RegionOne
uwsgi_run keystone "$KPORT" /usr/bin/keystone-wsgi-public OS_KEYSTONE_CONFIG_FILES="$dir/keystone/keystone.conf"

# Barbican: reads its configuration from $HOME/.barbican/barbican.conf, whatever argv says.
mkdir -p barbican/home/.barbican
KEK=$(head -c 32 /dev/urandom | base64)
cat >barbican/home/.barbican/barbican.conf <<EOC
[DEFAULT]
host_href = http://127.0.0.1:$BPORT
sql_connection = sqlite:///$dir/barbican/barbican.db
db_auto_create = false
use_stderr = true
[database]
connection = sqlite:///$dir/barbican/barbican.db
[secretstore]
enabled_secretstore_plugins = store_crypto
[crypto]
enabled_crypto_plugins = simple_crypto
[simple_crypto_plugin]
kek = $KEK
[keystone_notifications]
enable = false
[oslo_policy]
enforce_new_defaults = false
enforce_scope = false
$(authtoken barbican)
EOC
HOME=$dir/barbican/home barbican-manage db upgrade >"$dir/barbican-manage.log" 2>&1
wal barbican/barbican.db
# One Barbican process: two writing one sqlite database under the tests' parallel load answered a secret store
# with 500 "Secret creation failure" (the database locked); its requests are short, so one serves them all.
UWSGI_PROCESSES=1 uwsgi_run barbican "$BPORT" /usr/bin/barbican-wsgi-api HOME="$dir/barbican/home"

# Glance, with its key manager configured (castellan on this Barbican: deleting an image whose deletion policy says
# so deletes its secret, as in a real cloud) and an image size cap of 24 MiB (uploads above it are refused with 413
# while their body is still being sent; the tests' other images are at most a few MiB), and a storage quota per
# owner (user_storage_quota) no project reaches by uploading: a test fills project `quota` up to it.
GLANCE_SIZE_CAP=$((24 << 20))
GLANCE_QUOTA=$((1 << 40))
mkdir -p glance/images glance/staging glance/tasks
cat >glance/glance-api.conf <<EOC
[DEFAULT]
bind_host = 127.0.0.1
bind_port = $GPORT
workers = 0
image_size_cap = $GLANCE_SIZE_CAP
user_storage_quota = $GLANCE_QUOTA
enabled_backends = file:file
use_stderr = true
[database]
connection = sqlite:///$dir/glance/glance.db
[glance_store]
default_backend = file
[file]
filesystem_store_datadir = $dir/glance/images
[os_glance_staging_store]
filesystem_store_datadir = $dir/glance/staging
[os_glance_tasks_store]
filesystem_store_datadir = $dir/glance/tasks
[paste_deploy]
flavor = keystone
config_file = /etc/glance/glance-api-paste.ini
[key_manager]
backend = barbican
[barbican]
barbican_endpoint = http://127.0.0.1:$BPORT
auth_endpoint = $KURL/v3
[oslo_policy]
enforce_new_defaults = false
enforce_scope = false
$(authtoken glance)
EOC
glance-manage --config-file "$dir/glance/glance-api.conf" db_sync >"$dir/glance-manage.log" 2>&1
wal glance/glance.db
glance-api --config-file "$dir/glance/glance-api.conf" >"$dir/glance.log" 2>&1 &
pids+=($!)

wait_http "$KURL/v3" keystone
python3 "$here/bootstrap.py" "$KURL/v3" "$ADMIN_PW" "$SERVICE_PW" "http://127.0.0.1:$BPORT" \
  "http://127.0.0.1:$GPORT" >"$dir/bootstrap.log" 2>&1 || fail "bootstrap: $(tail -5 "$dir/bootstrap.log")"
wait_http "http://127.0.0.1:$BPORT/" barbican
wait_http "http://127.0.0.1:$GPORT/versions" glance

cat >"$dir/env" <<EOC
KEYSTONE_URL=$KURL/v3
BARBICAN_URL=http://127.0.0.1:$BPORT
GLANCE_URL=http://127.0.0.1:$GPORT
ADMIN_PASSWORD=$ADMIN_PW
GLANCE_SIZE_CAP=$GLANCE_SIZE_CAP
GLANCE_QUOTA=$GLANCE_QUOTA
PIDS=${pids[*]}
EOC
cat >"$dir/clouds.yaml" <<EOC
clouds:
  test:
    auth:
      auth_url: $KURL/v3
      username: admin
      password: $ADMIN_PW
      project_name: admin
      user_domain_name: Default
      project_domain_name: Default
    region_name: RegionOne
    interface: public
    identity_api_version: 3
  quota:
    auth:
      auth_url: $KURL/v3
      username: quota
      password: $ADMIN_PW
      project_name: quota
      user_domain_name: Default
      project_domain_name: Default
    region_name: RegionOne
    interface: public
    identity_api_version: 3
EOC
touch "$dir/ready"
trap - ERR
while kill -0 "$watch" 2>/dev/null; do sleep 0.5; done
stop
