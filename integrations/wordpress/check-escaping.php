<?php
/**
 * Checks that every output of the plugin is escaped, as the escaping rule of the
 * WordPress coding standards (WordPress.Security.EscapeOutput) asks: whatever `echo`,
 * `print`, `<?=`, `printf`/`vprintf`, `wp_die`, `exit`/`die` write must be a literal or
 * the value of an escaping function, part by part of a concatenation; `_e`, `_ex`,
 * `print_r`, `var_dump` and `var_export` are refused outright. Debian has phpcs but not
 * those standards, so this does their job for this rule.
 *
 * Usage: php check-escaping.php FILE|DIR...   Exit 0 when every output is escaped; 1 and
 * one line per fault (file:line: what) otherwise.
 *
 * @package agegate
 */

// Functions whose value is safe to write into HTML.
const SAFE_CALLS = array(
	'esc_html', 'esc_attr', 'esc_url', 'esc_js', 'esc_textarea', 'esc_xml',
	'esc_html__', 'esc_attr__', 'esc_html_x', 'esc_attr_x',
	'wp_kses', 'wp_kses_post', 'wp_kses_data',
	'absint', 'intval', 'floatval', 'number_format_i18n',
	'checked', 'selected', 'disabled', 'wp_nonce_field', 'get_submit_button',
);
// Calls that write their arguments: name => which arguments (0-based; -1: all).
const WRITERS = array(
	'printf'  => -1,
	'vprintf' => -1,
	'wp_die'  => array( 0, 1 ),
	'exit'    => -1,
	'die'     => -1,
);
const FORBIDDEN = array( '_e', '_ex', 'print_r', 'var_dump', 'var_export' );

$faults = array();
$files  = array();
foreach ( array_slice( $argv, 1 ) as $arg ) {
	if ( is_dir( $arg ) ) {
		$it = new RecursiveIteratorIterator( new RecursiveDirectoryIterator( $arg, FilesystemIterator::SKIP_DOTS ) );
		foreach ( $it as $file ) {
			if ( str_ends_with( $file->getPathname(), '.php' ) ) {
				$files[] = $file->getPathname();
			}
		}
	} else {
		$files[] = $arg;
	}
}
if ( ! $files ) {
	fwrite( STDERR, "usage: php check-escaping.php FILE|DIR...\n" );
	exit( 2 );
}
sort( $files );
foreach ( $files as $file ) {
	$tokens = array_values(
		array_filter(
			token_get_all( (string) file_get_contents( $file ) ),
			static fn( $t ) => ! is_array( $t ) || ! in_array( $t[0], array( T_WHITESPACE, T_COMMENT, T_DOC_COMMENT ), true )
		)
	);
	check_file( $file, $tokens, $faults );
}
foreach ( $faults as $fault ) {
	echo $fault, "\n";
}
fwrite( STDERR, count( $files ) . ' files, ' . count( $faults ) . " unescaped outputs\n" );
exit( $faults ? 1 : 0 );

/**
 * Finds the output points of one file.
 *
 * @param string $file   Its path.
 * @param array  $tokens Its tokens, without whitespace and comments.
 * @param array  $faults Where faults are added.
 */
function check_file( string $file, array $tokens, array &$faults ): void {
	$n = count( $tokens );
	for ( $i = 0; $i < $n; $i++ ) {
		$t = $tokens[ $i ];
		if ( ! is_array( $t ) ) {
			continue;
		}
		$line = $t[2];
		if ( in_array( $t[0], array( T_ECHO, T_PRINT, T_OPEN_TAG_WITH_ECHO ), true ) ) {
			$end = statement_end( $tokens, $i + 1 );
			foreach ( split_top( array_slice( $tokens, $i + 1, $end - $i - 1 ), ',' ) as $arg ) {
				check_expression( $arg, "$file:$line", $t[1], $faults );
			}
			$i = $end;
			continue;
		}
		$name = strtolower( $t[1] );
		$prev = $tokens[ $i - 1 ] ?? null;
		$is_call = ( T_STRING === $t[0] || T_EXIT === $t[0] ) && '(' === ( $tokens[ $i + 1 ] ?? null )
			&& ! ( is_array( $prev ) && in_array( $prev[0], array( T_FUNCTION, T_OBJECT_OPERATOR, T_DOUBLE_COLON, T_NEW ), true ) );
		if ( ! $is_call ) {
			continue;
		}
		if ( in_array( $name, FORBIDDEN, true ) ) {
			$faults[] = "$file:$line: $name() writes without escaping";
			continue;
		}
		if ( array_key_exists( $name, WRITERS ) ) {
			$close = matching( $tokens, $i + 1 );
			$args  = split_top( array_slice( $tokens, $i + 2, $close - $i - 2 ), ',' );
			foreach ( $args as $k => $arg ) {
				if ( -1 === WRITERS[ $name ] || in_array( $k, WRITERS[ $name ], true ) ) {
					check_expression( $arg, "$file:$line", $name . '()', $faults );
				}
			}
		}
	}
}

/**
 * Checks that an expression written out is escaped, operand by operand of `.`.
 *
 * @param array  $expr   Its tokens.
 * @param string $where  file:line.
 * @param string $writer What writes it.
 * @param array  $faults Where faults are added.
 */
function check_expression( array $expr, string $where, string $writer, array &$faults ): void {
	foreach ( split_top( $expr, '.' ) as $operand ) {
		if ( ! safe_operand( $operand ) ) {
			$text     = implode( '', array_map( static fn( $t ) => is_array( $t ) ? $t[1] : $t, $operand ) );
			$faults[] = "$where: $writer writes an unescaped value: $text";
		}
	}
}

/**
 * Whether one operand is safe: a literal without interpolation, a number, an integer
 * cast of anything, or a whole call to a function of SAFE_CALLS.
 *
 * @param array $operand Its tokens.
 */
function safe_operand( array $operand ): bool {
	if ( ! $operand ) {
		return true;
	}
	$first = $operand[0];
	if ( 1 === count( $operand ) && is_array( $first )
		&& in_array( $first[0], array( T_CONSTANT_ENCAPSED_STRING, T_LNUMBER, T_DNUMBER ), true ) ) {
		return true;
	}
	if ( is_array( $first ) && T_INT_CAST === $first[0] ) {
		return true;
	}
	if ( is_array( $first ) && T_STRING === $first[0] && '(' === ( $operand[1] ?? null )
		&& in_array( strtolower( $first[1] ), SAFE_CALLS, true ) ) {
		return matching( $operand, 1 ) === count( $operand ) - 1;
	}
	if ( '(' === $first && matching( $operand, 0 ) === count( $operand ) - 1 ) {
		return safe_operand( array_slice( $operand, 1, -1 ) );
	}
	return false;
}

/**
 * The index of the bracket that closes the one at `$open`.
 *
 * @param array $tokens The tokens.
 * @param int   $open   Index of '(' or '['.
 */
function matching( array $tokens, int $open ): int {
	$depth = 0;
	$count = count( $tokens );
	for ( $i = $open; $i < $count; $i++ ) {
		$depth += opens( $tokens[ $i ] ) - closes( $tokens[ $i ] );
		if ( 0 === $depth ) {
			return $i;
		}
	}
	return $count - 1;
}

/**
 * Index of the `;` or `?>` that ends the statement starting at `$from`.
 *
 * @param array $tokens The tokens.
 * @param int   $from   Where the statement's expression starts.
 */
function statement_end( array $tokens, int $from ): int {
	$depth = 0;
	$count = count( $tokens );
	for ( $i = $from; $i < $count; $i++ ) {
		$t = $tokens[ $i ];
		if ( 0 === $depth && ( ';' === $t || ( is_array( $t ) && T_CLOSE_TAG === $t[0] ) ) ) {
			return $i;
		}
		$depth += opens( $t ) - closes( $t );
	}
	return $count;
}

/**
 * Splits tokens on `$separator` outside brackets.
 *
 * @param array  $tokens    The tokens.
 * @param string $separator ',' or '.'.
 * @return array<int, array>
 */
function split_top( array $tokens, string $separator ): array {
	$parts   = array( array() );
	$depth   = 0;
	foreach ( $tokens as $t ) {
		if ( 0 === $depth && $t === $separator ) {
			$parts[] = array();
			continue;
		}
		$depth                           += opens( $t ) - closes( $t );
		$parts[ count( $parts ) - 1 ][] = $t;
	}
	return $parts;
}

/** 1 for a token that opens a bracket. @param mixed $t A token. */
function opens( $t ): int {
	return in_array( $t, array( '(', '[', '{' ), true ) || ( is_array( $t ) && in_array( $t[0], array( T_CURLY_OPEN, T_DOLLAR_OPEN_CURLY_BRACES ), true ) ) ? 1 : 0;
}

/** 1 for a token that closes a bracket. @param mixed $t A token. */
function closes( $t ): int {
	return in_array( $t, array( ')', ']', '}' ), true ) ? 1 : 0;
}
