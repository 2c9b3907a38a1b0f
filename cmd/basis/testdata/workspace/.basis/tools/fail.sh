#!/bin/sh
echo "the database is locked; try again in a minute" >&2
exit 3
