"""Why a local model could not be installed (brainchat.localmodels.download.explain): each
DownloadError kind, in the page's language. The terminal prints the English message itself."""

TEXT = {
    "models.error.offline": (
        "cannot reach {host}: this machine looks offline, or a proxy or firewall blocks it. "
        "A model downloads once; after that it runs offline. A file you already have installs "
        "with `brainchat models pull /path/to/model.gguf`.",
        "无法连接 {host}：本机似乎离线，或被代理、防火墙拦截。模型只需下载一次，之后可离线运行。"
        "已有的文件可用 `brainchat models pull /path/to/model.gguf` 安装。",
        "無法連線 {host}：本機似乎離線，或被代理、防火牆攔截。模型只需下載一次，之後可離線執行。"
        "已有的檔案可用 `brainchat models pull /path/to/model.gguf` 安裝。",
    ),
    "models.error.no_space": (
        "not enough disk space for {name} in {folder}: it needs {need} more, {free} is free. "
        "Free some space, or set BRAINCHAT_STATE_DIR to a folder on a larger disk.",
        "{folder} 的磁盘空间不足以存放 {name}：还需要 {need}，目前可用 {free}。"
        "请释放空间，或把 BRAINCHAT_STATE_DIR 设到更大的磁盘上。",
        "{folder} 的磁碟空間不足以存放 {name}：還需要 {need}，目前可用 {free}。"
        "請釋放空間，或把 BRAINCHAT_STATE_DIR 設到更大的磁碟上。",
    ),
    "models.error.disk_full": (
        "the disk under {folder} filled up while downloading {name}; what arrived is kept: "
        "free some space and try again to resume.",
        "下载 {name} 时 {folder} 所在磁盘已满；已收到的部分会保留：释放空间后重试即可续传。",
        "下載 {name} 時 {folder} 所在磁碟已滿；已收到的部分會保留：釋放空間後重試即可續傳。",
    ),
    "models.error.lost": (
        "the connection to {host} kept dropping; the {kept} received are kept: try again to "
        "resume.",
        "与 {host} 的连接反复中断；已收到的 {kept} 会保留：重试即可续传。",
        "與 {host} 的連線反覆中斷；已收到的 {kept} 會保留：重試即可續傳。",
    ),
    "models.error.cancelled": (
        "the download of {name} was cancelled; what arrived is kept for the next try.",
        "{name} 的下载已取消；已收到的部分会保留，下次继续。",
        "{name} 的下載已取消；已收到的部分會保留，下次繼續。",
    ),
    "models.error.busy": (
        "{name} is being downloaded by another brainchat process (the app or a terminal); wait "
        "for it to finish, then try again.",
        "另一个 brainchat 进程（应用或终端）正在下载 {name}；请等它完成后再试。",
        "另一個 brainchat 程序（應用或終端機）正在下載 {name}；請等它完成後再試。",
    ),
    "models.error.sha256": (
        "the file downloaded for {name} has sha256 {got}, but {want} was expected: it is not "
        "the vetted file (a changed mirror or a damaged transfer), so it was removed. Try again.",
        "为 {name} 下载的文件 sha256 为 {got}，应为 {want}：不是经审核的文件（镜像已变更或传输损坏），"
        "已删除。请重试。",
        "為 {name} 下載的檔案 sha256 為 {got}，應為 {want}：不是經審核的檔案（鏡像已變更或傳輸損毀），"
        "已刪除。請重試。",
    ),
    "models.error.hub_sha256": (
        "{host} states sha256 {got} for {name}, but the catalog pins {want}: not the vetted "
        "file, so nothing was downloaded.",
        "{host} 给出的 {name} sha256 为 {got}，但目录固定的是 {want}：不是经审核的文件，因此没有下载。",
        "{host} 給出的 {name} sha256 為 {got}，但目錄固定的是 {want}：不是經審核的檔案，因此沒有下載。",
    ),
    "models.error.size": (
        "the server offers {got} for {name}, the catalog expects {want}: not the pinned file, "
        "so nothing was kept.",
        "服务器提供的 {name} 大小为 {got}，目录预期 {want}：不是固定的文件，未保留任何内容。",
        "伺服器提供的 {name} 大小為 {got}，目錄預期 {want}：不是固定的檔案，未保留任何內容。",
    ),
    "models.error.gated": (
        "{name} at {host} needs a login or an accepted licence (HTTP {code}).",
        "{host} 上的 {name} 需要登录或先接受许可证（HTTP {code}）。",
        "{host} 上的 {name} 需要登入或先接受授權條款（HTTP {code}）。",
    ),
    "models.error.not_found": (
        "{name} was not found at {host} (HTTP {code}): the repository, revision or file name "
        "may be wrong.",
        "在 {host} 上找不到 {name}（HTTP {code}）：仓库、版本或文件名可能有误。",
        "在 {host} 上找不到 {name}（HTTP {code}）：儲存庫、版本或檔名可能有誤。",
    ),
    "models.error.busy_hub": (
        "{host} refused {name}: too many requests (HTTP {code}); try again in a few minutes.",
        "{host} 拒绝了 {name}：请求过多（HTTP {code}）；请过几分钟再试。",
        "{host} 拒絕了 {name}：請求過多（HTTP {code}）；請過幾分鐘再試。",
    ),
    "models.error.http": (
        "downloading {name} from {host} failed: HTTP {code}.",
        "从 {host} 下载 {name} 失败：HTTP {code}。",
        "從 {host} 下載 {name} 失敗：HTTP {code}。",
    ),
    "models.error.not_gguf": (
        "{source} is not a GGUF model file.",
        "{source} 不是 GGUF 模型文件。",
        "{source} 不是 GGUF 模型檔案。",
    ),
    "models.error.not_gguf_page": (
        "{source} is a web page, not a GGUF model file: on Hugging Face give the file's download "
        "link (…/resolve/<revision>/<file>.gguf), not its page (…/blob/…).",
        "{source} 是网页，不是 GGUF 模型文件：在 Hugging Face 上请给出文件的下载链接"
        "（…/resolve/<revision>/<file>.gguf），而不是它的页面（…/blob/…）。",
        "{source} 是網頁，不是 GGUF 模型檔案：在 Hugging Face 上請給出檔案的下載連結"
        "（…/resolve/<revision>/<file>.gguf），而不是它的頁面（…/blob/…）。",
    ),
    "models.error.unknown": (
        "{source} is not a catalog model, an http(s) URL of a .gguf file, nor a file that exists.",
        "{source} 既不是目录中的模型，也不是 .gguf 文件的 http(s) 网址或已存在的文件。",
        "{source} 既不是目錄中的模型，也不是 .gguf 檔案的 http(s) 網址或已存在的檔案。",
    ),
    "models.error.bad_name": (
        "{name} is not a usable .gguf file name (letters, digits, . _ + -).",
        "{name} 不是可用的 .gguf 文件名（字母、数字、. _ + -）。",
        "{name} 不是可用的 .gguf 檔名（字母、數字、. _ + -）。",
    ),
    "models.error.exists": (
        "a different file named {name} is already installed; remove it first "
        "(`brainchat models remove {name}`).",
        "已安装了另一个名为 {name} 的文件；请先删除它（`brainchat models remove {name}`）。",
        "已安裝了另一個名為 {name} 的檔案；請先刪除它（`brainchat models remove {name}`）。",
    ),
    "models.error.folder": (
        "the models folder {folder} cannot be created or written by this user.",
        "无法创建模型文件夹 {folder}，或当前用户无权写入。",
        "無法建立模型資料夾 {folder}，或目前使用者無權寫入。",
    ),
    "models.error.hub_url": (
        "{var} must be an http(s) URL such as https://huggingface.co.",
        "{var} 必须是 http(s) 网址，例如 https://huggingface.co。",
        "{var} 必須是 http(s) 網址，例如 https://huggingface.co。",
    ),
}
