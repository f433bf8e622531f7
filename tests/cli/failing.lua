-- A script that fails on purpose (test_usage.sh checks the error location).
local x = 1
error("deliberate failure " .. x)
