#!/bin/bash
#    Licensed under the Apache License, Version 2.0 (the "License"); you may
#    not use this file except in compliance with the License. You may obtain
#    a copy of the License at
#
#         http://www.apache.org/licenses/LICENSE-2.0
#
#    Unless required by applicable law or agreed to in writing, software
#    distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
#    WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
#    License for the specific language governing permissions and limitations
#    under the License.

# Prepare MariaDB/MySQL and PostgreSQL for the functional tests, the
# OpenStack way: a user "openstack_citest" (password "openstack_citest") that
# owns a database "openstack_citest" and may create and drop the randomly
# named databases oslo.db's opportunistic fixtures provision for each run.
#
# Run it as root (or as a user who may administer both servers). It is
# idempotent: run it as often as you like. A server that is not reachable is
# reported and skipped, so the tests for it skip (or fail, in CI). Runs
# that start at once take turns.

set -eu

# One run at a time: CI's two floor jobs start this script at the same
# moment, and PostgreSQL fails one of two concurrent ALTER ROLE statements
# on a role with "tuple concurrently updated".
exec 9>"${TMPDIR:-/tmp}/murano-cidr-test-setup.lock"
flock 9

DB_USER=openstack_citest
DB_PW=openstack_citest
DB_NAME=openstack_citest
DB_HOST=${DB_HOST:-127.0.0.1}

mysql_admin() {
    # Root over the local socket first, then over TCP; no password either way.
    if mysql -uroot -e "SELECT 1" >/dev/null 2>&1; then
        mysql -uroot "$@"
    else
        mysql -uroot -h "$DB_HOST" "$@"
    fi
}

setup_mysql() {
    if ! command -v mysql >/dev/null; then
        echo "mysql client not installed; skipping MariaDB/MySQL"
        return 0
    fi
    if ! mysql_admin -e "SELECT 1" >/dev/null 2>&1; then
        echo "MariaDB/MySQL is not reachable as root; skipping it"
        return 0
    fi
    local host
    for host in localhost 127.0.0.1; do
        mysql_admin <<EOF
CREATE USER IF NOT EXISTS '$DB_USER'@'$host' IDENTIFIED BY '$DB_PW';
ALTER USER '$DB_USER'@'$host' IDENTIFIED BY '$DB_PW';
GRANT ALL PRIVILEGES ON *.* TO '$DB_USER'@'$host';
EOF
    done
    mysql_admin <<EOF
CREATE DATABASE IF NOT EXISTS $DB_NAME CHARACTER SET utf8mb4;
FLUSH PRIVILEGES;
EOF
    mysql -u"$DB_USER" -p"$DB_PW" -h "$DB_HOST" "$DB_NAME" -e "SELECT 1" \
        >/dev/null
    echo "MariaDB/MySQL: $DB_USER ready"
}

psql_admin() {
    # Run the SQL given as the only argument as the postgres superuser:
    # through its own account first, then over TCP (trust, or a password in
    # PGPASSWORD). The SQL goes on standard input, so no shell quoting.
    local psql="psql -v ON_ERROR_STOP=1 -Atq"
    if command -v sudo >/dev/null && sudo -n -u postgres true 2>/dev/null; then
        printf '%s\n' "$1" | sudo -n -u postgres $psql
    elif [ "$(id -u)" = 0 ] && id postgres >/dev/null 2>&1 \
            && su postgres -s /bin/sh -c "$psql -c 'SELECT 1'" \
            >/dev/null 2>&1; then
        printf '%s\n' "$1" | su postgres -s /bin/sh -c "$psql"
    else
        printf '%s\n' "$1" | $psql -U postgres -h "$DB_HOST"
    fi
}

setup_postgresql() {
    if ! command -v psql >/dev/null; then
        echo "psql not installed; skipping PostgreSQL"
        return 0
    fi
    if ! psql_admin "SELECT 1" >/dev/null 2>&1; then
        echo "PostgreSQL is not reachable as postgres; skipping it"
        return 0
    fi
    psql_admin "DO \$\$ BEGIN
        IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$DB_USER') THEN
            CREATE ROLE $DB_USER;
        END IF;
    END \$\$;"
    psql_admin "ALTER ROLE $DB_USER WITH LOGIN CREATEDB PASSWORD '$DB_PW';"
    if [ -z "$(psql_admin \
            "SELECT 1 FROM pg_database WHERE datname = '$DB_NAME'")" ]; then
        psql_admin "CREATE DATABASE $DB_NAME OWNER $DB_USER;"
    fi
    PGPASSWORD=$DB_PW psql -U "$DB_USER" -h "$DB_HOST" -d "$DB_NAME" \
        -Atqc "SELECT 1" >/dev/null
    echo "PostgreSQL: $DB_USER ready"
}

setup_mysql
setup_postgresql
