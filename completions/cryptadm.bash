_cryptadm() {
    local i cur prev opts cmd
    COMPREPLY=()
    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
        cur="$2"
    else
        cur="${COMP_WORDS[COMP_CWORD]}"
    fi
    prev="$3"
    cmd=""
    opts=""

    for i in "${COMP_WORDS[@]:0:COMP_CWORD}"
    do
        case "${cmd},${i}" in
            ",$1")
                cmd="cryptadm"
                ;;
            cryptadm,bootstrap)
                cmd="cryptadm__subcmd__bootstrap"
                ;;
            cryptadm,disk)
                cmd="cryptadm__subcmd__disk"
                ;;
            cryptadm,help)
                cmd="cryptadm__subcmd__help"
                ;;
            cryptadm,image)
                cmd="cryptadm__subcmd__image"
                ;;
            cryptadm,secret)
                cmd="cryptadm__subcmd__secret"
                ;;
            cryptadm,volume)
                cmd="cryptadm__subcmd__volume"
                ;;
            cryptadm__subcmd__bootstrap,help)
                cmd="cryptadm__subcmd__bootstrap__subcmd__help"
                ;;
            cryptadm__subcmd__bootstrap,open)
                cmd="cryptadm__subcmd__bootstrap__subcmd__open"
                ;;
            cryptadm__subcmd__bootstrap,seal)
                cmd="cryptadm__subcmd__bootstrap__subcmd__seal"
                ;;
            cryptadm__subcmd__bootstrap__subcmd__help,help)
                cmd="cryptadm__subcmd__bootstrap__subcmd__help__subcmd__help"
                ;;
            cryptadm__subcmd__bootstrap__subcmd__help,open)
                cmd="cryptadm__subcmd__bootstrap__subcmd__help__subcmd__open"
                ;;
            cryptadm__subcmd__bootstrap__subcmd__help,seal)
                cmd="cryptadm__subcmd__bootstrap__subcmd__help__subcmd__seal"
                ;;
            cryptadm__subcmd__disk,clevis-bind)
                cmd="cryptadm__subcmd__disk__subcmd__clevis__subcmd__bind"
                ;;
            cryptadm__subcmd__disk,convert)
                cmd="cryptadm__subcmd__disk__subcmd__convert"
                ;;
            cryptadm__subcmd__disk,decrypt)
                cmd="cryptadm__subcmd__disk__subcmd__decrypt"
                ;;
            cryptadm__subcmd__disk,help)
                cmd="cryptadm__subcmd__disk__subcmd__help"
                ;;
            cryptadm__subcmd__disk,inspect)
                cmd="cryptadm__subcmd__disk__subcmd__inspect"
                ;;
            cryptadm__subcmd__disk,luks-format)
                cmd="cryptadm__subcmd__disk__subcmd__luks__subcmd__format"
                ;;
            cryptadm__subcmd__disk,tpm2-enroll)
                cmd="cryptadm__subcmd__disk__subcmd__tpm2__subcmd__enroll"
                ;;
            cryptadm__subcmd__disk__subcmd__help,clevis-bind)
                cmd="cryptadm__subcmd__disk__subcmd__help__subcmd__clevis__subcmd__bind"
                ;;
            cryptadm__subcmd__disk__subcmd__help,convert)
                cmd="cryptadm__subcmd__disk__subcmd__help__subcmd__convert"
                ;;
            cryptadm__subcmd__disk__subcmd__help,decrypt)
                cmd="cryptadm__subcmd__disk__subcmd__help__subcmd__decrypt"
                ;;
            cryptadm__subcmd__disk__subcmd__help,help)
                cmd="cryptadm__subcmd__disk__subcmd__help__subcmd__help"
                ;;
            cryptadm__subcmd__disk__subcmd__help,inspect)
                cmd="cryptadm__subcmd__disk__subcmd__help__subcmd__inspect"
                ;;
            cryptadm__subcmd__disk__subcmd__help,luks-format)
                cmd="cryptadm__subcmd__disk__subcmd__help__subcmd__luks__subcmd__format"
                ;;
            cryptadm__subcmd__disk__subcmd__help,tpm2-enroll)
                cmd="cryptadm__subcmd__disk__subcmd__help__subcmd__tpm2__subcmd__enroll"
                ;;
            cryptadm__subcmd__help,bootstrap)
                cmd="cryptadm__subcmd__help__subcmd__bootstrap"
                ;;
            cryptadm__subcmd__help,disk)
                cmd="cryptadm__subcmd__help__subcmd__disk"
                ;;
            cryptadm__subcmd__help,help)
                cmd="cryptadm__subcmd__help__subcmd__help"
                ;;
            cryptadm__subcmd__help,image)
                cmd="cryptadm__subcmd__help__subcmd__image"
                ;;
            cryptadm__subcmd__help,secret)
                cmd="cryptadm__subcmd__help__subcmd__secret"
                ;;
            cryptadm__subcmd__help,volume)
                cmd="cryptadm__subcmd__help__subcmd__volume"
                ;;
            cryptadm__subcmd__help__subcmd__bootstrap,open)
                cmd="cryptadm__subcmd__help__subcmd__bootstrap__subcmd__open"
                ;;
            cryptadm__subcmd__help__subcmd__bootstrap,seal)
                cmd="cryptadm__subcmd__help__subcmd__bootstrap__subcmd__seal"
                ;;
            cryptadm__subcmd__help__subcmd__disk,clevis-bind)
                cmd="cryptadm__subcmd__help__subcmd__disk__subcmd__clevis__subcmd__bind"
                ;;
            cryptadm__subcmd__help__subcmd__disk,convert)
                cmd="cryptadm__subcmd__help__subcmd__disk__subcmd__convert"
                ;;
            cryptadm__subcmd__help__subcmd__disk,decrypt)
                cmd="cryptadm__subcmd__help__subcmd__disk__subcmd__decrypt"
                ;;
            cryptadm__subcmd__help__subcmd__disk,inspect)
                cmd="cryptadm__subcmd__help__subcmd__disk__subcmd__inspect"
                ;;
            cryptadm__subcmd__help__subcmd__disk,luks-format)
                cmd="cryptadm__subcmd__help__subcmd__disk__subcmd__luks__subcmd__format"
                ;;
            cryptadm__subcmd__help__subcmd__disk,tpm2-enroll)
                cmd="cryptadm__subcmd__help__subcmd__disk__subcmd__tpm2__subcmd__enroll"
                ;;
            cryptadm__subcmd__help__subcmd__image,authorize)
                cmd="cryptadm__subcmd__help__subcmd__image__subcmd__authorize"
                ;;
            cryptadm__subcmd__help__subcmd__image,decrypt)
                cmd="cryptadm__subcmd__help__subcmd__image__subcmd__decrypt"
                ;;
            cryptadm__subcmd__help__subcmd__image,encrypt)
                cmd="cryptadm__subcmd__help__subcmd__image__subcmd__encrypt"
                ;;
            cryptadm__subcmd__help__subcmd__image,inspect)
                cmd="cryptadm__subcmd__help__subcmd__image__subcmd__inspect"
                ;;
            cryptadm__subcmd__help__subcmd__image,keyprovider)
                cmd="cryptadm__subcmd__help__subcmd__image__subcmd__keyprovider"
                ;;
            cryptadm__subcmd__help__subcmd__image,node-config)
                cmd="cryptadm__subcmd__help__subcmd__image__subcmd__node__subcmd__config"
                ;;
            cryptadm__subcmd__help__subcmd__image,seal-key)
                cmd="cryptadm__subcmd__help__subcmd__image__subcmd__seal__subcmd__key"
                ;;
            cryptadm__subcmd__help__subcmd__image,stream-decrypt)
                cmd="cryptadm__subcmd__help__subcmd__image__subcmd__stream__subcmd__decrypt"
                ;;
            cryptadm__subcmd__help__subcmd__secret,generate-k8s)
                cmd="cryptadm__subcmd__help__subcmd__secret__subcmd__generate__subcmd__k8s"
                ;;
            cryptadm__subcmd__help__subcmd__volume,import)
                cmd="cryptadm__subcmd__help__subcmd__volume__subcmd__import"
                ;;
            cryptadm__subcmd__help__subcmd__volume,rewrap)
                cmd="cryptadm__subcmd__help__subcmd__volume__subcmd__rewrap"
                ;;
            cryptadm__subcmd__help__subcmd__volume,rotate)
                cmd="cryptadm__subcmd__help__subcmd__volume__subcmd__rotate"
                ;;
            cryptadm__subcmd__help__subcmd__volume,serve)
                cmd="cryptadm__subcmd__help__subcmd__volume__subcmd__serve"
                ;;
            cryptadm__subcmd__image,authorize)
                cmd="cryptadm__subcmd__image__subcmd__authorize"
                ;;
            cryptadm__subcmd__image,decrypt)
                cmd="cryptadm__subcmd__image__subcmd__decrypt"
                ;;
            cryptadm__subcmd__image,encrypt)
                cmd="cryptadm__subcmd__image__subcmd__encrypt"
                ;;
            cryptadm__subcmd__image,help)
                cmd="cryptadm__subcmd__image__subcmd__help"
                ;;
            cryptadm__subcmd__image,inspect)
                cmd="cryptadm__subcmd__image__subcmd__inspect"
                ;;
            cryptadm__subcmd__image,keyprovider)
                cmd="cryptadm__subcmd__image__subcmd__keyprovider"
                ;;
            cryptadm__subcmd__image,node-config)
                cmd="cryptadm__subcmd__image__subcmd__node__subcmd__config"
                ;;
            cryptadm__subcmd__image,seal-key)
                cmd="cryptadm__subcmd__image__subcmd__seal__subcmd__key"
                ;;
            cryptadm__subcmd__image,stream-decrypt)
                cmd="cryptadm__subcmd__image__subcmd__stream__subcmd__decrypt"
                ;;
            cryptadm__subcmd__image__subcmd__help,authorize)
                cmd="cryptadm__subcmd__image__subcmd__help__subcmd__authorize"
                ;;
            cryptadm__subcmd__image__subcmd__help,decrypt)
                cmd="cryptadm__subcmd__image__subcmd__help__subcmd__decrypt"
                ;;
            cryptadm__subcmd__image__subcmd__help,encrypt)
                cmd="cryptadm__subcmd__image__subcmd__help__subcmd__encrypt"
                ;;
            cryptadm__subcmd__image__subcmd__help,help)
                cmd="cryptadm__subcmd__image__subcmd__help__subcmd__help"
                ;;
            cryptadm__subcmd__image__subcmd__help,inspect)
                cmd="cryptadm__subcmd__image__subcmd__help__subcmd__inspect"
                ;;
            cryptadm__subcmd__image__subcmd__help,keyprovider)
                cmd="cryptadm__subcmd__image__subcmd__help__subcmd__keyprovider"
                ;;
            cryptadm__subcmd__image__subcmd__help,node-config)
                cmd="cryptadm__subcmd__image__subcmd__help__subcmd__node__subcmd__config"
                ;;
            cryptadm__subcmd__image__subcmd__help,seal-key)
                cmd="cryptadm__subcmd__image__subcmd__help__subcmd__seal__subcmd__key"
                ;;
            cryptadm__subcmd__image__subcmd__help,stream-decrypt)
                cmd="cryptadm__subcmd__image__subcmd__help__subcmd__stream__subcmd__decrypt"
                ;;
            cryptadm__subcmd__secret,generate-k8s)
                cmd="cryptadm__subcmd__secret__subcmd__generate__subcmd__k8s"
                ;;
            cryptadm__subcmd__secret,help)
                cmd="cryptadm__subcmd__secret__subcmd__help"
                ;;
            cryptadm__subcmd__secret__subcmd__help,generate-k8s)
                cmd="cryptadm__subcmd__secret__subcmd__help__subcmd__generate__subcmd__k8s"
                ;;
            cryptadm__subcmd__secret__subcmd__help,help)
                cmd="cryptadm__subcmd__secret__subcmd__help__subcmd__help"
                ;;
            cryptadm__subcmd__volume,help)
                cmd="cryptadm__subcmd__volume__subcmd__help"
                ;;
            cryptadm__subcmd__volume,import)
                cmd="cryptadm__subcmd__volume__subcmd__import"
                ;;
            cryptadm__subcmd__volume,rewrap)
                cmd="cryptadm__subcmd__volume__subcmd__rewrap"
                ;;
            cryptadm__subcmd__volume,rotate)
                cmd="cryptadm__subcmd__volume__subcmd__rotate"
                ;;
            cryptadm__subcmd__volume,serve)
                cmd="cryptadm__subcmd__volume__subcmd__serve"
                ;;
            cryptadm__subcmd__volume__subcmd__help,help)
                cmd="cryptadm__subcmd__volume__subcmd__help__subcmd__help"
                ;;
            cryptadm__subcmd__volume__subcmd__help,import)
                cmd="cryptadm__subcmd__volume__subcmd__help__subcmd__import"
                ;;
            cryptadm__subcmd__volume__subcmd__help,rewrap)
                cmd="cryptadm__subcmd__volume__subcmd__help__subcmd__rewrap"
                ;;
            cryptadm__subcmd__volume__subcmd__help,rotate)
                cmd="cryptadm__subcmd__volume__subcmd__help__subcmd__rotate"
                ;;
            cryptadm__subcmd__volume__subcmd__help,serve)
                cmd="cryptadm__subcmd__volume__subcmd__help__subcmd__serve"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        cryptadm)
            opts="-q -v -h -V --quiet --verbose --no-progress --color --timeout --help --version bootstrap image secret disk volume help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__bootstrap)
            opts="-q -v -h -V --quiet --verbose --no-progress --color --timeout --help --version seal open help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__bootstrap__subcmd__help)
            opts="seal open help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__bootstrap__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__bootstrap__subcmd__help__subcmd__open)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__bootstrap__subcmd__help__subcmd__seal)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__bootstrap__subcmd__open)
            opts="-q -v -h -V --in --out --passphrase-file --strict --creates --plugin-timeout --retries --vault-addr --vault-namespace --vault-cacert --vault-capath --vault-client-cert --vault-client-key --vault-skip-verify --vault-auth --vault-auth-mount --vault-role --vault-role-id --vault-secret-id-file --vault-jwt-file --vault-token-file --aws-region --aws-endpoint-url --aws-profile --aws-ca-bundle --kmip-server --kmip-cacert --kmip-client-cert --kmip-client-key --kmip-username --kmip-password-file --skip-remote --cert-dir --allow-http --allow-local-targets --tpm2-device --quiet --verbose --no-progress --color --timeout --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --in)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --out)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --passphrase-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --creates)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --plugin-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --retries)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-addr)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-namespace)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-cacert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-capath)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-client-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-client-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-auth)
                    COMPREPLY=($(compgen -W "token approle jwt kubernetes" -- "${cur}"))
                    return 0
                    ;;
                --vault-auth-mount)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-role)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-role-id)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-secret-id-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-jwt-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-token-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-region)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-endpoint-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-profile)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-ca-bundle)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-server)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-cacert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-client-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-client-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-username)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cert-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tpm2-device)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__bootstrap__subcmd__seal)
            opts="-q -v -h -V --in --provider --passphrase-uri --clevis-pin --clevis-config --clevis-trust-adv --tpm2-device --passphrase-file --remote-config --cloud-init --ignition --cryptadm-path --template --out --output-format --plugin-timeout --retries --vault-addr --vault-namespace --vault-cacert --vault-capath --vault-client-cert --vault-client-key --vault-skip-verify --vault-auth --vault-auth-mount --vault-role --vault-role-id --vault-secret-id-file --vault-jwt-file --vault-token-file --aws-region --aws-endpoint-url --aws-profile --aws-ca-bundle --kmip-server --kmip-cacert --kmip-client-cert --kmip-client-key --kmip-username --kmip-password-file --quiet --verbose --no-progress --color --timeout --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --in)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --provider)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --passphrase-uri)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --clevis-pin)
                    COMPREPLY=($(compgen -W "tang tpm2 sss" -- "${cur}"))
                    return 0
                    ;;
                --clevis-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tpm2-device)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --passphrase-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remote-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cryptadm-path)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --template)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --out)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output-format)
                    COMPREPLY=($(compgen -W "yaml json" -- "${cur}"))
                    return 0
                    ;;
                --plugin-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --retries)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-addr)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-namespace)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-cacert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-capath)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-client-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-client-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-auth)
                    COMPREPLY=($(compgen -W "token approle jwt kubernetes" -- "${cur}"))
                    return 0
                    ;;
                --vault-auth-mount)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-role)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-role-id)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-secret-id-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-jwt-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-token-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-region)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-endpoint-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-profile)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-ca-bundle)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-server)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-cacert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-client-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-client-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-username)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__disk)
            opts="-q -v -h -V --quiet --verbose --no-progress --color --timeout --help --version luks-format inspect decrypt convert clevis-bind tpm2-enroll help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__disk__subcmd__clevis__subcmd__bind)
            opts="-q -v -h -V --passphrase-file --key-file --vault-addr --vault-namespace --vault-cacert --vault-capath --vault-client-cert --vault-client-key --vault-skip-verify --vault-auth --vault-auth-mount --vault-role --vault-role-id --vault-secret-id-file --vault-jwt-file --vault-token-file --aws-region --aws-endpoint-url --aws-profile --aws-ca-bundle --kmip-server --kmip-cacert --kmip-client-cert --kmip-client-key --kmip-username --kmip-password-file --clevis-pin --clevis-config --clevis-trust-adv --tpm2-device --quiet --verbose --no-progress --color --timeout --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --passphrase-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-addr)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-namespace)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-cacert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-capath)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-client-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-client-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-auth)
                    COMPREPLY=($(compgen -W "token approle jwt kubernetes" -- "${cur}"))
                    return 0
                    ;;
                --vault-auth-mount)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-role)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-role-id)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-secret-id-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-jwt-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-token-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-region)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-endpoint-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-profile)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-ca-bundle)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-server)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-cacert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-client-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-client-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-username)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --clevis-pin)
                    COMPREPLY=($(compgen -W "tang tpm2 sss" -- "${cur}"))
                    return 0
                    ;;
                --clevis-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tpm2-device)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__disk__subcmd__convert)
            opts="-q -v -h -V --format --encryption-key --passphrase-file --key-file --new-key-file --secret-type --source-secret-type --source-secret --cluster-size --iter-time --pbkdf-force-iterations --glance --key-id --delete-key-with-image --key-deletion-policy --output-format --key-manager --secret --upload --os-cloud --force --quiet --verbose --no-progress --color --timeout --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --format)
                    COMPREPLY=($(compgen -W "raw qcow2" -- "${cur}"))
                    return 0
                    ;;
                --encryption-key)
                    COMPREPLY=($(compgen -W "same shelve new existing none" -- "${cur}"))
                    return 0
                    ;;
                --passphrase-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --new-key-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --secret-type)
                    COMPREPLY=($(compgen -W "passphrase symmetric" -- "${cur}"))
                    return 0
                    ;;
                --source-secret-type)
                    COMPREPLY=($(compgen -W "passphrase symmetric" -- "${cur}"))
                    return 0
                    ;;
                --source-secret)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --iter-time)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --pbkdf-force-iterations)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-id)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-deletion-policy)
                    COMPREPLY=($(compgen -W "on_image_deletion do_not_delete" -- "${cur}"))
                    return 0
                    ;;
                --output-format)
                    COMPREPLY=($(compgen -W "yaml json" -- "${cur}"))
                    return 0
                    ;;
                --key-manager)
                    COMPREPLY=($(compgen -W "barbican" -- "${cur}"))
                    return 0
                    ;;
                --secret)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --upload)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --os-cloud)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__disk__subcmd__decrypt)
            opts="-q -v -h -V --passphrase-file --key-file --out --force --clevis --tpm2 --tpm2-device --vault-addr --vault-namespace --vault-cacert --vault-capath --vault-client-cert --vault-client-key --vault-skip-verify --vault-auth --vault-auth-mount --vault-role --vault-role-id --vault-secret-id-file --vault-jwt-file --vault-token-file --aws-region --aws-endpoint-url --aws-profile --aws-ca-bundle --kmip-server --kmip-cacert --kmip-client-cert --kmip-client-key --kmip-username --kmip-password-file --quiet --verbose --no-progress --color --timeout --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --passphrase-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --out)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tpm2-device)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-addr)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-namespace)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-cacert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-capath)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-client-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-client-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-auth)
                    COMPREPLY=($(compgen -W "token approle jwt kubernetes" -- "${cur}"))
                    return 0
                    ;;
                --vault-auth-mount)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-role)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-role-id)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-secret-id-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-jwt-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-token-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-region)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-endpoint-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-profile)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-ca-bundle)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-server)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-cacert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-client-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-client-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-username)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__disk__subcmd__help)
            opts="luks-format inspect decrypt convert clevis-bind tpm2-enroll help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__disk__subcmd__help__subcmd__clevis__subcmd__bind)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__disk__subcmd__help__subcmd__convert)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__disk__subcmd__help__subcmd__decrypt)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__disk__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__disk__subcmd__help__subcmd__inspect)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__disk__subcmd__help__subcmd__luks__subcmd__format)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__disk__subcmd__help__subcmd__tpm2__subcmd__enroll)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__disk__subcmd__inspect)
            opts="-q -v -h -V --output-format --quiet --verbose --no-progress --color --timeout --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --output-format)
                    COMPREPLY=($(compgen -W "yaml json" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__disk__subcmd__luks__subcmd__format)
            opts="-q -v -h -V --type --passphrase-file --key-file --format --cluster-size --secret-type --cipher --key-size --hash --sector-size --pbkdf --iter-time --pbkdf-force-iterations --pbkdf-memory --pbkdf-parallel --label --uuid --size --from --glance --key-id --delete-key-with-image --key-deletion-policy --output-format --key-manager --secret --upload --os-cloud --force --vault-addr --vault-namespace --vault-cacert --vault-capath --vault-client-cert --vault-client-key --vault-skip-verify --vault-auth --vault-auth-mount --vault-role --vault-role-id --vault-secret-id-file --vault-jwt-file --vault-token-file --aws-region --aws-endpoint-url --aws-profile --aws-ca-bundle --kmip-server --kmip-cacert --kmip-client-cert --kmip-client-key --kmip-username --kmip-password-file --clevis-pin --clevis-config --clevis-trust-adv --tpm2-device --quiet --verbose --no-progress --color --timeout --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --type)
                    COMPREPLY=($(compgen -W "luks2 luks1" -- "${cur}"))
                    return 0
                    ;;
                --passphrase-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "raw qcow2" -- "${cur}"))
                    return 0
                    ;;
                --cluster-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --secret-type)
                    COMPREPLY=($(compgen -W "passphrase symmetric" -- "${cur}"))
                    return 0
                    ;;
                --cipher)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-size)
                    COMPREPLY=($(compgen -W "256 512" -- "${cur}"))
                    return 0
                    ;;
                --hash)
                    COMPREPLY=($(compgen -W "sha256 sha512" -- "${cur}"))
                    return 0
                    ;;
                --sector-size)
                    COMPREPLY=($(compgen -W "512 4096" -- "${cur}"))
                    return 0
                    ;;
                --pbkdf)
                    COMPREPLY=($(compgen -W "argon2id argon2i pbkdf2" -- "${cur}"))
                    return 0
                    ;;
                --iter-time)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --pbkdf-force-iterations)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --pbkdf-memory)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --pbkdf-parallel)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --label)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --uuid)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --from)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-id)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-deletion-policy)
                    COMPREPLY=($(compgen -W "on_image_deletion do_not_delete" -- "${cur}"))
                    return 0
                    ;;
                --output-format)
                    COMPREPLY=($(compgen -W "yaml json" -- "${cur}"))
                    return 0
                    ;;
                --key-manager)
                    COMPREPLY=($(compgen -W "barbican" -- "${cur}"))
                    return 0
                    ;;
                --secret)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --upload)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --os-cloud)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-addr)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-namespace)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-cacert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-capath)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-client-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-client-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-auth)
                    COMPREPLY=($(compgen -W "token approle jwt kubernetes" -- "${cur}"))
                    return 0
                    ;;
                --vault-auth-mount)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-role)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-role-id)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-secret-id-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-jwt-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-token-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-region)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-endpoint-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-profile)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-ca-bundle)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-server)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-cacert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-client-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-client-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-username)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --clevis-pin)
                    COMPREPLY=($(compgen -W "tang tpm2 sss" -- "${cur}"))
                    return 0
                    ;;
                --clevis-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tpm2-device)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__disk__subcmd__tpm2__subcmd__enroll)
            opts="-q -v -h -V --passphrase-file --key-file --tpm2-pcrs --tpm2-pcr-bank --tpm2-primary-alg --tpm2-device --tpm2-with-pin --tpm2-pin-file --quiet --verbose --no-progress --color --timeout --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --passphrase-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tpm2-pcrs)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tpm2-pcr-bank)
                    COMPREPLY=($(compgen -W "sha1 sha256 sha384 sha512" -- "${cur}"))
                    return 0
                    ;;
                --tpm2-primary-alg)
                    COMPREPLY=($(compgen -W "ecc rsa" -- "${cur}"))
                    return 0
                    ;;
                --tpm2-device)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tpm2-pin-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__help)
            opts="bootstrap image secret disk volume help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__help__subcmd__bootstrap)
            opts="seal open"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__help__subcmd__bootstrap__subcmd__open)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__help__subcmd__bootstrap__subcmd__seal)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__help__subcmd__disk)
            opts="luks-format inspect decrypt convert clevis-bind tpm2-enroll"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__help__subcmd__disk__subcmd__clevis__subcmd__bind)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__help__subcmd__disk__subcmd__convert)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__help__subcmd__disk__subcmd__decrypt)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__help__subcmd__disk__subcmd__inspect)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__help__subcmd__disk__subcmd__luks__subcmd__format)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__help__subcmd__disk__subcmd__tpm2__subcmd__enroll)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__help__subcmd__image)
            opts="encrypt decrypt authorize inspect node-config stream-decrypt keyprovider seal-key"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__help__subcmd__image__subcmd__authorize)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__help__subcmd__image__subcmd__decrypt)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__help__subcmd__image__subcmd__encrypt)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__help__subcmd__image__subcmd__inspect)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__help__subcmd__image__subcmd__keyprovider)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__help__subcmd__image__subcmd__node__subcmd__config)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__help__subcmd__image__subcmd__seal__subcmd__key)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__help__subcmd__image__subcmd__stream__subcmd__decrypt)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__help__subcmd__secret)
            opts="generate-k8s"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__help__subcmd__secret__subcmd__generate__subcmd__k8s)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__help__subcmd__volume)
            opts="rotate serve rewrap import"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__help__subcmd__volume__subcmd__import)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__help__subcmd__volume__subcmd__rewrap)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__help__subcmd__volume__subcmd__rotate)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__help__subcmd__volume__subcmd__serve)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__image)
            opts="-q -v -h -V --quiet --verbose --no-progress --color --timeout --help --version encrypt decrypt authorize inspect node-config stream-decrypt keyprovider seal-key help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__image__subcmd__authorize)
            opts="-q -v -h -V --output-format --platform --allow-plaintext --decryption-key --key --dec-recipient --cert --passphrase-file --gpg-homedir --tpm2-device --vault-addr --vault-namespace --vault-cacert --vault-capath --vault-client-cert --vault-client-key --vault-skip-verify --vault-auth --vault-auth-mount --vault-role --vault-role-id --vault-secret-id-file --vault-jwt-file --vault-token-file --aws-region --aws-endpoint-url --aws-profile --aws-ca-bundle --creds --password-file --authfile --tls-verify --cert-dir --quiet --verbose --no-progress --color --timeout --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --output-format)
                    COMPREPLY=($(compgen -W "yaml json" -- "${cur}"))
                    return 0
                    ;;
                --platform)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --decryption-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dec-recipient)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --passphrase-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --gpg-homedir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tpm2-device)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-addr)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-namespace)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-cacert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-capath)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-client-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-client-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-auth)
                    COMPREPLY=($(compgen -W "token approle jwt kubernetes" -- "${cur}"))
                    return 0
                    ;;
                --vault-auth-mount)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-role)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-role-id)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-secret-id-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-jwt-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-token-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-region)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-endpoint-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-profile)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-ca-bundle)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --creds)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --authfile)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-verify)
                    COMPREPLY=($(compgen -W "true false" -- "${cur}"))
                    return 0
                    ;;
                --cert-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__image__subcmd__decrypt)
            opts="-q -v -h -V --layer --platform --allow-plaintext --decryption-key --key --dec-recipient --cert --passphrase-file --gpg-homedir --tpm2-device --vault-addr --vault-namespace --vault-cacert --vault-capath --vault-client-cert --vault-client-key --vault-skip-verify --vault-auth --vault-auth-mount --vault-role --vault-role-id --vault-secret-id-file --vault-jwt-file --vault-token-file --aws-region --aws-endpoint-url --aws-profile --aws-ca-bundle --src-creds --src-password-file --src-authfile --src-tls-verify --src-cert-dir --dest-creds --dest-password-file --dest-authfile --dest-tls-verify --dest-cert-dir --cert-dir --jobs --quiet --verbose --no-progress --color --timeout --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --layer)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --platform)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --decryption-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dec-recipient)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --passphrase-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --gpg-homedir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tpm2-device)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-addr)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-namespace)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-cacert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-capath)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-client-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-client-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-auth)
                    COMPREPLY=($(compgen -W "token approle jwt kubernetes" -- "${cur}"))
                    return 0
                    ;;
                --vault-auth-mount)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-role)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-role-id)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-secret-id-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-jwt-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-token-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-region)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-endpoint-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-profile)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-ca-bundle)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --src-creds)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --src-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --src-authfile)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --src-tls-verify)
                    COMPREPLY=($(compgen -W "true false" -- "${cur}"))
                    return 0
                    ;;
                --src-cert-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dest-creds)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dest-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dest-authfile)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dest-tls-verify)
                    COMPREPLY=($(compgen -W "true false" -- "${cur}"))
                    return 0
                    ;;
                --dest-cert-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cert-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --jobs)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__image__subcmd__encrypt)
            opts="-q -v -h -V --encryption-key --recipient --encrypt-layer --layer --remove-recipient --accept-unidentified-loss --platform --allow-plaintext --decryption-key --key --dec-recipient --cert --passphrase-file --gpg-homedir --tpm2-device --vault-addr --vault-namespace --vault-cacert --vault-capath --vault-client-cert --vault-client-key --vault-skip-verify --vault-auth --vault-auth-mount --vault-role --vault-role-id --vault-secret-id-file --vault-jwt-file --vault-token-file --aws-region --aws-endpoint-url --aws-profile --aws-ca-bundle --src-creds --src-password-file --src-authfile --src-tls-verify --src-cert-dir --dest-creds --dest-password-file --dest-authfile --dest-tls-verify --dest-cert-dir --cert-dir --jobs --quiet --verbose --no-progress --color --timeout --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --recipient)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --encryption-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --layer)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --encrypt-layer)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remove-recipient)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --platform)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --decryption-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dec-recipient)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --passphrase-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --gpg-homedir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tpm2-device)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-addr)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-namespace)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-cacert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-capath)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-client-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-client-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-auth)
                    COMPREPLY=($(compgen -W "token approle jwt kubernetes" -- "${cur}"))
                    return 0
                    ;;
                --vault-auth-mount)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-role)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-role-id)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-secret-id-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-jwt-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-token-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-region)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-endpoint-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-profile)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-ca-bundle)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --src-creds)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --src-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --src-authfile)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --src-tls-verify)
                    COMPREPLY=($(compgen -W "true false" -- "${cur}"))
                    return 0
                    ;;
                --src-cert-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dest-creds)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dest-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dest-authfile)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dest-tls-verify)
                    COMPREPLY=($(compgen -W "true false" -- "${cur}"))
                    return 0
                    ;;
                --dest-cert-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cert-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --jobs)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__image__subcmd__help)
            opts="encrypt decrypt authorize inspect node-config stream-decrypt keyprovider seal-key help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__image__subcmd__help__subcmd__authorize)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__image__subcmd__help__subcmd__decrypt)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__image__subcmd__help__subcmd__encrypt)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__image__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__image__subcmd__help__subcmd__inspect)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__image__subcmd__help__subcmd__keyprovider)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__image__subcmd__help__subcmd__node__subcmd__config)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__image__subcmd__help__subcmd__seal__subcmd__key)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__image__subcmd__help__subcmd__stream__subcmd__decrypt)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__image__subcmd__inspect)
            opts="-q -v -h -V --creds --password-file --authfile --tls-verify --cert-dir --output-format --quiet --verbose --no-progress --color --timeout --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --creds)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --authfile)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-verify)
                    COMPREPLY=($(compgen -W "true false" -- "${cur}"))
                    return 0
                    ;;
                --cert-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output-format)
                    COMPREPLY=($(compgen -W "yaml json" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__image__subcmd__keyprovider)
            opts="-q -v -h -V --listen --quiet --verbose --no-progress --color --timeout --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --listen)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__image__subcmd__node__subcmd__config)
            opts="-q -v -h -V --runtime --containerd-version --binary --keys-dir --keyprovider-config --processor-env --quiet --verbose --no-progress --color --timeout --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --runtime)
                    COMPREPLY=($(compgen -W "containerd crio" -- "${cur}"))
                    return 0
                    ;;
                --containerd-version)
                    COMPREPLY=($(compgen -W "1 2" -- "${cur}"))
                    return 0
                    ;;
                --binary)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --keys-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --keyprovider-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --processor-env)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__image__subcmd__seal__subcmd__key)
            opts="-q -v -h -V --out --clevis-pin --clevis-config --clevis-trust-adv --tpm2-device --quiet --verbose --no-progress --color --timeout --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --out)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --clevis-pin)
                    COMPREPLY=($(compgen -W "tang tpm2 sss" -- "${cur}"))
                    return 0
                    ;;
                --clevis-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tpm2-device)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__image__subcmd__stream__subcmd__decrypt)
            opts="-q -v -h -V --decryption-keys-path --quiet --verbose --no-progress --color --timeout --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --decryption-keys-path)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__secret)
            opts="-q -v -h -V --quiet --verbose --no-progress --color --timeout --help --version generate-k8s help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__secret__subcmd__generate__subcmd__k8s)
            opts="-n -o -q -v -h -V --key --namespace --format --with-daemonset --runtime --service-account --output-format --out --passphrase-file --quiet --verbose --no-progress --color --timeout --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --namespace)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -n)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "node kep enc-key-sync" -- "${cur}"))
                    return 0
                    ;;
                --runtime)
                    COMPREPLY=($(compgen -W "containerd crio" -- "${cur}"))
                    return 0
                    ;;
                --service-account)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output-format)
                    COMPREPLY=($(compgen -W "yaml json" -- "${cur}"))
                    return 0
                    ;;
                --out)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --passphrase-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__secret__subcmd__help)
            opts="generate-k8s help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__secret__subcmd__help__subcmd__generate__subcmd__k8s)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__secret__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__volume)
            opts="-q -v -h -V --quiet --verbose --no-progress --color --timeout --help --version rotate serve rewrap import help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__volume__subcmd__help)
            opts="rotate serve rewrap import help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__volume__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__volume__subcmd__help__subcmd__import)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__volume__subcmd__help__subcmd__rewrap)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__volume__subcmd__help__subcmd__rotate)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__volume__subcmd__help__subcmd__serve)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__volume__subcmd__import)
            opts="-q -v -h -V --volume-id --volume-path --passphrase-file --key-store --force --key-wrap --vault-addr --vault-namespace --vault-cacert --vault-capath --vault-client-cert --vault-client-key --vault-skip-verify --vault-auth --vault-auth-mount --vault-role --vault-role-id --vault-secret-id-file --vault-jwt-file --vault-token-file --kmip-server --kmip-cacert --kmip-client-cert --kmip-client-key --kmip-username --kmip-password-file --aws-region --aws-endpoint-url --aws-profile --aws-ca-bundle --quiet --verbose --no-progress --color --timeout --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --volume-id)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --volume-path)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --passphrase-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-store)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-wrap)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-addr)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-namespace)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-cacert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-capath)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-client-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-client-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-auth)
                    COMPREPLY=($(compgen -W "token approle jwt kubernetes" -- "${cur}"))
                    return 0
                    ;;
                --vault-auth-mount)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-role)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-role-id)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-secret-id-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-jwt-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-token-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-server)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-cacert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-client-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-client-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-username)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-region)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-endpoint-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-profile)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-ca-bundle)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__volume__subcmd__rewrap)
            opts="-q -v -h -V --key-store --no-rotate --key-wrap --vault-addr --vault-namespace --vault-cacert --vault-capath --vault-client-cert --vault-client-key --vault-skip-verify --vault-auth --vault-auth-mount --vault-role --vault-role-id --vault-secret-id-file --vault-jwt-file --vault-token-file --aws-region --aws-endpoint-url --aws-profile --aws-ca-bundle --quiet --verbose --no-progress --color --timeout --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --key-store)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-wrap)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-addr)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-namespace)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-cacert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-capath)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-client-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-client-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-auth)
                    COMPREPLY=($(compgen -W "token approle jwt kubernetes" -- "${cur}"))
                    return 0
                    ;;
                --vault-auth-mount)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-role)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-role-id)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-secret-id-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-jwt-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-token-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-region)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-endpoint-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-profile)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-ca-bundle)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__volume__subcmd__rotate)
            opts="-q -v -h -V --volume-id --volume-path --key-store --new-key-file --request --take-over-claim --volume-path-template --sysfs-root --dev-root --key-wrap --vault-addr --vault-namespace --vault-cacert --vault-capath --vault-client-cert --vault-client-key --vault-skip-verify --vault-auth --vault-auth-mount --vault-role --vault-role-id --vault-secret-id-file --vault-jwt-file --vault-token-file --kmip-server --kmip-cacert --kmip-client-cert --kmip-client-key --kmip-username --kmip-password-file --aws-region --aws-endpoint-url --aws-profile --aws-ca-bundle --quiet --verbose --no-progress --color --timeout --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --volume-id)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --volume-path)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-store)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --new-key-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --request)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --volume-path-template)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sysfs-root)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dev-root)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-wrap)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-addr)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-namespace)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-cacert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-capath)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-client-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-client-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-auth)
                    COMPREPLY=($(compgen -W "token approle jwt kubernetes" -- "${cur}"))
                    return 0
                    ;;
                --vault-auth-mount)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-role)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-role-id)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-secret-id-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-jwt-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-token-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-server)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-cacert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-client-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-client-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-username)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-region)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-endpoint-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-profile)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-ca-bundle)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        cryptadm__subcmd__volume__subcmd__serve)
            opts="-q -v -h -V --endpoint --key-store --drivername --max-concurrent --max-queued --volume-path-template --sysfs-root --dev-root --key-wrap --vault-addr --vault-namespace --vault-cacert --vault-capath --vault-client-cert --vault-client-key --vault-skip-verify --vault-auth --vault-auth-mount --vault-role --vault-role-id --vault-secret-id-file --vault-jwt-file --vault-token-file --kmip-server --kmip-cacert --kmip-client-cert --kmip-client-key --kmip-username --kmip-password-file --aws-region --aws-endpoint-url --aws-profile --aws-ca-bundle --quiet --verbose --no-progress --color --timeout --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --endpoint)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-store)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --drivername)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-concurrent)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-queued)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --volume-path-template)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sysfs-root)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dev-root)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-wrap)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-addr)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-namespace)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-cacert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-capath)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-client-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-client-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-auth)
                    COMPREPLY=($(compgen -W "token approle jwt kubernetes" -- "${cur}"))
                    return 0
                    ;;
                --vault-auth-mount)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-role)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-role-id)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-secret-id-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-jwt-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --vault-token-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-server)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-cacert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-client-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-client-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-username)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kmip-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-region)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-endpoint-url)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-profile)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --aws-ca-bundle)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
    esac
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _cryptadm -o nosort -o bashdefault -o default cryptadm
else
    complete -F _cryptadm -o bashdefault -o default cryptadm
fi
