<?php
/**
 * Runs one PHP expression inside the test's WordPress and prints its value as JSON: how
 * the test reads what the plugin stored (user meta) and resets it.
 *
 * Usage: php eval.php WORDPRESS_DIR HOST 'return EXPRESSION;'
 */
[ , $agegate_dir, $agegate_host, $agegate_code ] = $argv;
$_SERVER['HTTP_HOST']   = $agegate_host;
$_SERVER['REQUEST_URI'] = '/';
require $agegate_dir . '/wp-load.php';
echo wp_json_encode( eval( $agegate_code ) ), "\n"; // phpcs:ignore Squiz.PHP.Eval -- a test tool.
