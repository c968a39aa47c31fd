#!/bin/bash



set -ex

tee /tmp/pod-shared/magnum.conf <<EOF
[DEFAULT]
host = ${POD_NAME}
EOF
