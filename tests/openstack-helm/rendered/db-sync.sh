#!/bin/bash



set -ex

magnum-db-manage upgrade
