<?php
/**
 * Installs the throwaway WordPress of the end-to-end test (no browser): the site, an
 * administrator and two subscribers, pretty permalinks, and the posts the test visits
 * (the test then installs the plugin from its zip, as a site owner would). Prints what it made as JSON.
 *
 * Usage: php install.php WORDPRESS_DIR HOST ADMIN_PASSWORD READER_PASSWORD
 * Avoids WordPress's global names ($wp, $post, …), which wp-load.php uses.
 */
[ , $agegate_dir, $agegate_host, $agegate_admin_pass, $agegate_reader_pass ] = $argv;
$_SERVER['HTTP_HOST']   = $agegate_host;
$_SERVER['REQUEST_URI'] = '/';
define( 'WP_INSTALLING', true );
require $agegate_dir . '/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/upgrade.php';

$agegate_installed = wp_install( 'Cellar Door Wines', 'admin', 'admin@shop.test', false, '', wp_slash( $agegate_admin_pass ) );
update_option( 'permalink_structure', '/%postname%/' );
update_option( 'show_avatars', 0 );
$agegate_reader = wp_insert_user(
	array(
		'user_login' => 'reader',
		'user_pass'  => $agegate_reader_pass,
		'user_email' => 'reader@shop.test',
		'role'       => 'subscriber',
	)
);
$agegate_second = wp_insert_user(
	array(
		'user_login' => 'second',
		'user_pass'  => $agegate_reader_pass,
		'user_email' => 'second@shop.test',
		'role'       => 'subscriber',
	)
);
$agegate_post = static function ( string $slug, string $title, string $content, bool $gated ): int {
	$id = wp_insert_post(
		array(
			'post_name'    => $slug,
			'post_title'   => $title,
			'post_content' => $content,
			'post_status'  => 'publish',
			'post_author'  => 1,
		),
		true
	);
	if ( is_wp_error( $id ) ) {
		fwrite( STDERR, $id->get_error_message() . "\n" );
		exit( 1 );
	}
	if ( $gated ) {
		update_post_meta( $id, '_agegate_required', '1' );
	}
	return $id;
};
$agegate_gated  = $agegate_post( 'reserve-tasting', 'Reserve tasting notes', "<!-- wp:paragraph -->\n<p>GATED-MARKER: the 2019 reserve opens with dark cherry and cedar.</p>\n<!-- /wp:paragraph -->", true );
$agegate_cave   = $agegate_post( 'cellar-ワイン', 'Cellar ワイン', "<!-- wp:paragraph -->\n<p>GATED-MARKER: the cellar's rarest bottles.</p>\n<!-- /wp:paragraph -->", true );
$agegate_open   = $agegate_post( 'visiting-hours', 'Visiting hours', "<!-- wp:paragraph -->\n<p>OPEN-MARKER: the cellar door is open from 10 to 6.</p>\n<!-- /wp:paragraph -->", false );
$agegate_mixed  = $agegate_post( 'members-corner', 'Members corner', "<!-- wp:paragraph -->\n<p>MIXED-OPEN-MARKER: news for everyone.</p>\n<!-- /wp:paragraph -->\n\n<!-- wp:shortcode -->\n[agegate]SHORTCODE-MARKER: this month's offer is 20% off.[/agegate]\n<!-- /wp:shortcode -->", false );
flush_rewrite_rules( false );
echo wp_json_encode(
	array(
		'gated'  => $agegate_gated,
		'cave'   => $agegate_cave,
		'open'   => $agegate_open,
		'mixed'  => $agegate_mixed,
		'reader' => $agegate_reader,
		'second' => $agegate_second,
	)
), "\n";
