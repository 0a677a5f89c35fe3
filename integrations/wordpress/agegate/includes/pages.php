<?php
/**
 * What a visitor who is not verified sees: the "Verify your age" form (alone on the gate
 * page, or in place of a shortcode's content), and the page that says agegate is
 * unavailable. Every value is escaped where it is written.
 *
 * @package agegate
 */

defined( 'ABSPATH' ) || exit;

/** The URL of the page being shown, to come back to after the verification. */
function agegate_current_url(): string {
	if ( isset( $_GET['agegate_return'] ) ) { // phpcs:ignore WordPress.Security.NonceVerification.Recommended -- only decides where to go back to.
		// On the return route, the page the visitor came from (never the route itself).
		return agegate_back_url();
	}
	$uri = isset( $_SERVER['REQUEST_URI'] ) ? esc_url_raw( wp_unslash( $_SERVER['REQUEST_URI'] ) ) : '/';
	return wp_validate_redirect( home_url( $uri ), home_url( '/' ) );
}

/**
 * The form with the "Verify your age" button: a POST with a nonce to admin-post.php.
 *
 * @return string HTML.
 */
function agegate_form(): string {
	$html  = '<form class="agegate-form" method="post" action="' . esc_url( admin_url( 'admin-post.php' ) ) . '">';
	$html .= '<input type="hidden" name="action" value="agegate_verify">';
	$html .= '<input type="hidden" name="agegate_back" value="' . esc_attr( agegate_current_url() ) . '">';
	$html .= wp_nonce_field( 'agegate_verify', 'agegate_nonce', false, false );
	$html .= '<button type="submit" class="agegate-button">' . esc_html__( 'Verify your age', 'agegate' ) . '</button>';
	$html .= '</form>';
	return $html;
}

/**
 * The box that stands in for withheld content inside a page (a shortcode's content, a
 * gated post in a list).
 *
 * @param bool $with_form Whether it carries the button (not in feeds or the REST API).
 * @return string HTML.
 */
function agegate_notice( bool $with_form ): string {
	$html  = '<div class="agegate-notice">';
	$html .= '<p>' . esc_html__( 'This content is only available to visitors whose age has been verified.', 'agegate' ) . '</p>';
	$html .= $with_form ? agegate_form() : '';
	$html .= '</div>';
	return $html;
}

/** The stylesheet of the plugin's pages and boxes. */
function agegate_stylesheet_url(): string {
	return plugins_url( 'assets/agegate.css', AGEGATE_PLUGIN_FILE );
}

/**
 * The HTML the plugin's pages may hold: text, links and the verification form.
 *
 * @return array<string, array<string, bool>>
 */
function agegate_allowed_html(): array {
	$plain = array( 'class' => true );
	return array(
		'p'      => array(
			'class' => true,
			'role'  => true,
		),
		'strong' => array(),
		'a'      => array( 'href' => true ),
		'div'    => $plain,
		'form'   => array(
			'class'  => true,
			'method' => true,
			'action' => true,
		),
		'input'  => array(
			'type'  => true,
			'name'  => true,
			'value' => true,
			'id'    => true,
		),
		'button' => array(
			'type'  => true,
			'class' => true,
		),
	);
}

/**
 * Sends a whole page of the plugin's own and ends the request.
 *
 * @param int    $status  The HTTP status.
 * @param string $title   The page's heading (plain text).
 * @param string $body    Its content (HTML, escaped by the caller).
 */
function agegate_send_page( int $status, string $title, string $body ): void {
	nocache_headers();
	status_header( $status );
	header( 'Content-Type: text/html; charset=' . get_option( 'blog_charset' ) );
	header( 'Referrer-Policy: same-origin' );
	header( 'X-Frame-Options: DENY' );
	if ( 503 === $status ) {
		header( 'Retry-After: 30' );
	}
	?>
<!DOCTYPE html>
<html <?php language_attributes(); ?>>
<head>
<meta charset="<?php echo esc_attr( get_option( 'blog_charset' ) ); ?>">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title><?php echo esc_html( $title . ' – ' . get_bloginfo( 'name' ) ); ?></title>
<link rel="stylesheet" href="<?php echo esc_url( agegate_stylesheet_url() ); ?>">
</head>
<body class="agegate-page">
<main>
<p class="agegate-site"><a href="<?php echo esc_url( home_url( '/' ) ); ?>"><?php echo esc_html( get_bloginfo( 'name' ) ); ?></a></p>
<h1><?php echo esc_html( $title ); ?></h1>
<?php echo wp_kses( $body, agegate_allowed_html() ); ?>
</main>
</body>
</html>
	<?php
	exit;
}

/**
 * The gate page: the content is withheld, the button leads to the verification.
 *
 * @param string $notice An extra line above the button (plain text), or ''.
 * @param int    $status The HTTP status.
 */
function agegate_send_gate_page( string $notice = '', int $status = 200 ): void {
	$body = '<p>' . esc_html__( 'This page is only available to visitors whose age has been verified. The check is made by agegate, an age verification service; this site learns only whether it succeeded.', 'agegate' ) . '</p>';
	if ( '' !== $notice ) {
		$body .= '<p class="agegate-problem" role="alert"><strong>' . esc_html( $notice ) . '</strong></p>';
	}
	agegate_send_page( $status, __( 'Age verification required', 'agegate' ), $body . agegate_form() );
}

/** The page shown when agegate cannot be reached or fails: the content stays withheld. */
function agegate_send_unavailable_page(): void {
	$body  = '<p>' . esc_html__( 'Age verification is unavailable right now; please try again shortly', 'agegate' ) . '</p>';
	$body .= '<p><a href="' . esc_url( home_url( '/' ) ) . '">' . esc_html__( 'Back to the home page', 'agegate' ) . '</a></p>';
	agegate_send_page( 503, __( 'Age verification unavailable', 'agegate' ), $body );
}
