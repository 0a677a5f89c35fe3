<?php
/**
 * Removing the plugin removes its settings and what it stored about users and posts.
 *
 * @package agegate
 */

defined( 'WP_UNINSTALL_PLUGIN' ) || exit;

delete_option( 'agegate_settings' );
delete_metadata( 'user', 0, 'agegate_verified_at', '', true );
delete_metadata( 'post', 0, '_agegate_required', '', true );
