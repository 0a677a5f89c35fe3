<?php
/**
 * Router for PHP's built-in server, which has no rewrites: real files are served (and
 * real .php files run) as they are; every other path goes to WordPress's index.php, as
 * the rewrite rules of a web server would send it, so /wp-json/… and pretty permalinks
 * route.
 */
$root = $_SERVER['DOCUMENT_ROOT'];
$path = rawurldecode( (string) parse_url( $_SERVER['REQUEST_URI'], PHP_URL_PATH ) );
$file = realpath( $root . $path );
if ( false !== $file && str_starts_with( $file, realpath( $root ) )
	&& ( is_file( $file ) || is_file( $file . '/index.php' ) ) ) {
	return false;
}
$_SERVER['SCRIPT_NAME']     = '/index.php';
$_SERVER['PHP_SELF']        = '/index.php';
$_SERVER['SCRIPT_FILENAME'] = $root . '/index.php';
chdir( $root );
require $root . '/index.php';
