<?php
/**
 * Plugin Name: agegate test site
 * Description: Keeps the throwaway WordPress of the end-to-end test on loopback: no
 * emoji script from a CDN, no avatars, no mail.
 */
remove_action( 'wp_head', 'print_emoji_detection_script', 7 );
remove_action( 'admin_print_scripts', 'print_emoji_detection_script' );
add_filter( 'pre_option_show_avatars', '__return_zero' );
add_filter( 'pre_wp_mail', '__return_false' );
// No update checks (they would leave loopback; WP_HTTP_BLOCK_EXTERNAL refuses them, noisily).
remove_action( 'admin_init', '_maybe_update_core' );
remove_action( 'admin_init', '_maybe_update_plugins' );
remove_action( 'admin_init', '_maybe_update_themes' );
remove_action( 'admin_init', 'wp_maybe_auto_update' );
