# bash completion for stockade(1)                        -*- shell-script -*-
#
# Installed as ${datadir}/bash-completion/completions/stockade, where
# bash-completion loads it on first use; or source it from ~/.bashrc.
# Self-contained: it needs nothing of bash-completion's helpers.
# The options are those of each command's --help (stockade(1)).

_stockade_layers="limits process_cleanup environment working_directory
user_ns pid_ns mount_ns network_ns egress ipc_ns uts_ns terminal capabilities
no_new_privs landlock seccomp file_api results boundary policy"

# COMPREPLY = the words of $1 that start with $2.
_stockade_words()
{
	local IFS=$' \t\n'
	mapfile -t COMPREPLY < <(compgen -W "$1" -- "$2")
}

# COMPREPLY = files (or with $1 = -d, directories) matching $2.
_stockade_files()
{
	compopt -o filenames 2>/dev/null
	if [[ $1 == -d ]]; then
		mapfile -t COMPREPLY < <(compgen -d -- "$2")
	else
		mapfile -t COMPREPLY < <(compgen -f -- "$2")
	fi
}

# --only for check: layer names and check names (from `stockade check
# --list`, which runs no check), comma-separated.
_stockade_only()
{
	local cur=$1 exe=$2 head="" names
	if [[ $cur == *,* ]]; then
		head=${cur%,*},
		cur=${cur##*,}
	fi
	names=$_stockade_layers
	if [[ $cur == *.* && -x $exe ]]; then
		names+=" $("$exe" check --list 2>/dev/null |
			while read -r _ name _; do printf '%s ' "$name"; done)"
	fi
	local IFS=$' \t\n' w
	COMPREPLY=()
	for w in $(compgen -W "$names" -- "$cur"); do
		COMPREPLY+=("$head$w")
	done
	compopt -o nospace 2>/dev/null
}

_stockade()
{
	local cur=${COMP_WORDS[COMP_CWORD]}
	local prev=${COMP_WORDS[COMP_CWORD-1]}
	local cmd="" sub="" i dashdash=-1
	local exe=${COMP_WORDS[0]}
	local fsopts="--workspace --policy --help"

	COMPREPLY=()
	# The command, its subcommand (policy, eval), and where -- is.
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		--)
			if [[ $cmd == run ]]; then dashdash=$i; break; fi ;;
		-*) ;;
		*)
			if [[ -z $cmd ]]; then
				cmd=${COMP_WORDS[i]}
			elif [[ -z $sub && ( $cmd == policy || $cmd == eval ) ]]; then
				sub=${COMP_WORDS[i]}
			fi ;;
		esac
	done

	if [[ -z $cmd ]]; then
		_stockade_words "run put get ls stat rm mkdir mv unpack pack serve
			mcp policy doctor check eval --version --help" "$cur"
		return 0
	fi

	# After `run ... --`: the program, then its arguments (files).
	if ((dashdash > 0)); then
		if ((COMP_CWORD == dashdash + 1)); then
			mapfile -t COMPREPLY < <(compgen -c -- "$cur" | sort -u)
		else
			_stockade_files -f "$cur"
		fi
		return 0
	fi

	# --get SANDBOX:HOST where bash split the word at the colon
	# (COMP_WORDBREAKS): the host file after it.
	if [[ $cur == : && ${COMP_WORDS[COMP_CWORD-2]} == --get ]]; then
		_stockade_files -f ""; return 0
	fi
	if [[ $prev == : && ${COMP_WORDS[COMP_CWORD-3]} == --get ]]; then
		_stockade_files -f "$cur"; return 0
	fi

	# Option arguments.
	case $prev in
	--workspace|--prefix|--attacks|--attacks-src|--eval-dir)
		_stockade_files -d "$cur"; return 0 ;;
	--policy|--json)
		if [[ $prev == --policy || $cmd == eval ]]; then
			_stockade_files -f "$cur"; return 0
		fi ;;
	--socket|--stdin)
		_stockade_files -f "$cur"; return 0 ;;
	--env)
		# NAME=VALUE, or NAME (stockade's own value): the caller's names.
		[[ $cur == *=* ]] ||
			COMPREPLY=($(compgen -e -- "$cur"))
		return 0 ;;
	--put)
		# HOST:SANDBOX: the host file first.
		[[ $cur == *:* ]] || { _stockade_files -f "$cur"; return 0; }
		return 0 ;;
	--get)
		# SANDBOX:HOST: the host file after the colon.
		if [[ $cur == *:* ]]; then
			local head=${cur%%:*}: w IFS=$'\n'
			for w in $(compgen -f -- "${cur#*:}"); do
				COMPREPLY+=("$head$w")
			done
		fi
		return 0 ;;
	--format)
		_stockade_words "stream json text" "$cur"; return 0 ;;
	--only)
		if [[ $cmd == check ]]; then
			_stockade_only "$cur" "$exe"
		fi
		return 0 ;;
	--timeout|--cpu-time|--memory|--processes|--file-size|--tmp-size|\
	--output|--size|--limit|--mode|--jobs)
		return 0 ;;
	esac

	case $cmd in
	run)
		if [[ $cur == -* ]]; then
			_stockade_words "--policy --workspace --keep --timeout
				--cpu-time --memory --processes --file-size
				--tmp-size --output --json --format
				--unsafe-evaluation --no-progress --stdin
				--no-stdin --env --put --get --rollback-on-failure
				--dry-run -- --help" "$cur"
		fi ;;
	put)
		if [[ $cur == -* ]]; then
			_stockade_words "$fsopts --overwrite --size
				--no-progress" "$cur"
		else
			_stockade_files -f "$cur"
		fi ;;
	get)
		if [[ $cur == -* ]]; then
			_stockade_words "$fsopts --no-progress" "$cur"
		else
			_stockade_files -f "$cur"
		fi ;;
	ls)
		_stockade_words "$fsopts --recursive --limit --json" "$cur" ;;
	stat)
		_stockade_words "$fsopts --json" "$cur" ;;
	rm)
		_stockade_words "$fsopts --recursive" "$cur" ;;
	mkdir)
		_stockade_words "$fsopts --parents --mode" "$cur" ;;
	mv)
		_stockade_words "$fsopts --overwrite" "$cur" ;;
	unpack|pack)
		if [[ $cur == -* && $cmd == unpack ]]; then
			_stockade_words "$fsopts --overwrite" "$cur"
		elif [[ $cur == -* ]]; then
			_stockade_words "$fsopts" "$cur"
		else
			_stockade_files -f "$cur"
		fi ;;
	serve)
		_stockade_words "--workspace --policy --socket --help" "$cur" ;;
	mcp)
		_stockade_words "--workspace --policy --keep --help" "$cur" ;;
	policy)
		case $sub in
		"")	_stockade_words "show default check --help" "$cur" ;;
		show)	_stockade_words "--policy --help" "$cur" ;;
		default) _stockade_words "--help" "$cur" ;;
		check)
			if [[ $cur == -* ]]; then
				_stockade_words "--unsafe-evaluation --help" "$cur"
			else
				_stockade_files -f "$cur"
			fi ;;
		esac ;;
	doctor)
		_stockade_words "--json --help" "$cur" ;;
	check)
		_stockade_words "--json --only --list --prefix --help" "$cur" ;;
	eval)
		case $sub in
		"")	_stockade_words "layers isolation corpus filter --help" \
				"$cur" ;;
		filter)	_stockade_words "--eval-dir --only --json --jobs --keep
				--help" "$cur" ;;
		*)	_stockade_words "--attacks --attacks-src --only --json
				--jobs --keep --help" "$cur" ;;
		esac ;;
	esac
	return 0
}

complete -F _stockade stockade
