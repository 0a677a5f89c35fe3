<?php
/**
 * Plugin Name:       agegate
 * Description:       Gates posts, pages and parts of them behind an age verification by an agegate service.
 * Version:           1.0.0
 * Requires at least: 6.1
 * Requires PHP:      8.2
 * License:           MIT
 * Text Domain:       agegate
 * Domain Path:       /languages
 *
 * @package agegate
 */

defined( 'ABSPATH' ) || exit;

define( 'AGEGATE_PLUGIN_FILE', __FILE__ );

require_once __DIR__ . '/includes/settings.php';
require_once __DIR__ . '/includes/client.php';
require_once __DIR__ . '/includes/state.php';
require_once __DIR__ . '/includes/pages.php';
require_once __DIR__ . '/includes/gate.php';
require_once __DIR__ . '/includes/flow.php';
require_once __DIR__ . '/includes/webhook.php';
require_once __DIR__ . '/includes/admin.php';

add_action(
	'init',
	static function () {
		load_plugin_textdomain( 'agegate', false, dirname( plugin_basename( AGEGATE_PLUGIN_FILE ) ) . '/languages' );
	}
);
