#!/bin/sh
cat >/dev/null
echo "deployed (token ${#DEPLOY_TOKEN} characters long)"
